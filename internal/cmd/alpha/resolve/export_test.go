package resolve

import (
	"context"

	resolver "github.com/opmkit/opm/internal/resolve"
)

// SetResolver replaces the resolver until the returned func is called.
func SetResolver(fn func(context.Context, resolver.Question) (resolver.Answer, error)) func() {
	old := resolveQuestion
	resolveQuestion = fn
	return func() { resolveQuestion = old }
}
