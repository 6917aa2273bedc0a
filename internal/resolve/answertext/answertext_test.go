package answertext

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opmkit/opm/internal/resolve"
)

func TestOperatorLines(t *testing.T) {
	t.Parallel()
	v1, v2 := "a.v1", "a.v2"
	q := resolve.Question{Namespace: "ns", Subscriptions: []resolve.Subscription{{Package: "a", InstalledCSV: "a.v1"}, {Package: "b"}}}
	for _, tc := range []struct {
		op   resolve.Operator
		want string
	}{
		{resolve.Operator{Package: "a", Bundle: &v2, Channel: "s", Catalog: "c", CatalogNamespace: "ns"}, "  a: upgrade a.v1 -> a.v2 (channel s, catalog ns/c)\n"},
		{resolve.Operator{Package: "a", Bundle: &v1, Channel: "s", Catalog: "c", CatalogNamespace: "olm"}, "  a: stays at a.v1 (channel s, catalog c)\n"},
		{resolve.Operator{Package: "a"}, "  a: stays at a.v1\n"},
		{resolve.Operator{Package: "b"}, "  b: nothing installed\n"},
		{resolve.Operator{Package: "d", Dependency: true, Bundle: &v2, Channel: "s", Catalog: "c"}, "  d (dependency): install a.v2 (channel s, catalog c)\n"},
		{resolve.Operator{Package: "e\x1b[31m"}, "  e\\x1b[31m: nothing installed\n"},
	} {
		assert.Equal(t, tc.want, OperatorLine(q, tc.op))
	}
	qs := []resolve.Question{q}
	assert.False(t, Failed(qs, []resolve.Answer{{Operators: []resolve.Operator{{Package: "a"}}}}), "an installed operator staying is no failure")
	assert.True(t, Failed(qs, []resolve.Answer{{Operators: []resolve.Operator{{Package: "b"}}}}), "a new Subscription with nothing is")
	assert.True(t, Failed(qs, []resolve.Answer{{Unsatisfiable: true}}))
	doc := JSON(qs, []resolve.Answer{{Operators: []resolve.Operator{{Package: "a"}}}})
	assert.Equal(t, []string{}, doc.Operators[0].Reasons)
	assert.Equal(t, "a.v1", doc.Operators[0].Installed)
}
