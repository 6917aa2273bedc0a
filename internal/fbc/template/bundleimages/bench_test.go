package bundleimages_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template/bundleimages"
	"github.com/opmkit/opm/internal/fbc/template/templatetest"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

// BenchmarkRender renders the 16 bundle images a template names from a
// real registry: one at a time, as upstream does, and fetched ahead
// several at once (Prefetch), as render-template does. Each iteration is
// a new run (a new renderer and client).
//
//	go test -tags "$TAGS" -run '^$' -bench Render -benchtime 5x ./internal/fbc/template/bundleimages/
func BenchmarkRender(b *testing.B) {
	reg := registrytest.Start(b)
	var refs []string
	for i := range 16 {
		v := fmt.Sprintf("0.%d.0", i+1)
		refs = append(refs, templatetest.Push(b, templatetest.Version(b, "example-operator.v"+v, v, "", ""), reg.Ref("op-bundle:"+v)))
	}
	newRenderer := func() *bundleimages.Renderer {
		return bundleimages.New(func() (*image.Client, error) { return image.NewClient(image.Options{UseHTTP: true}) }, fbc.RenderOptions{})
	}
	ctx := context.Background()
	b.Run("one-at-a-time", func(b *testing.B) {
		for b.Loop() {
			r := newRenderer()
			for _, ref := range refs {
				if _, err := r.Render(ctx, ref); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("prefetch", func(b *testing.B) {
		for b.Loop() {
			r := newRenderer()
			r.Prefetch(ctx, refs)
			for _, ref := range refs {
				if _, err := r.Render(ctx, ref); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
