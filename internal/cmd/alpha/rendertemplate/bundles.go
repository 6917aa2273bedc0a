package rendertemplate

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/iostreams"
)

// bundles renders bundle images through one image client (the opener's),
// each image once however often a template names it. Prefetch renders a
// list of images several at once; the template then finds them done.
type bundles struct {
	opener   *bundlesource.Opener
	render   fbc.RenderOptions
	progress *iostreams.Progress

	mu   sync.Mutex
	done map[string]*result
}

type result struct {
	once sync.Once
	blob *fbc.Bundle
	err  error
}

func newBundles(opts image.Options, newClient func(image.Options) (*image.Client, error), render fbc.RenderOptions) *bundles {
	return &bundles{opener: bundlesource.NewOpener(opts, newClient), render: render, done: map[string]*result{}}
}

// Render is the olm.bundle blob of the bundle image ref. It is safe for
// concurrent use.
func (b *bundles) Render(ctx context.Context, ref string) (*fbc.Bundle, error) {
	b.mu.Lock()
	r := b.done[ref]
	if r == nil {
		r = &result{}
		b.done[ref] = r
	}
	b.mu.Unlock()
	r.once.Do(func() {
		r.blob, r.err = b.load(ctx, ref)
		b.progress.Step()
	})
	if r.blob == nil && r.err == nil {
		return nil, fmt.Errorf("%s: not rendered", ref)
	}
	if r.err != nil {
		return nil, r.err
	}
	// Callers may change the blob (its position): give each its own copy.
	c := *r.blob
	return &c, nil
}

func (b *bundles) load(ctx context.Context, ref string) (*fbc.Bundle, error) {
	local, err := bundlesource.IsLocal(ref)
	if err != nil {
		return nil, err
	}
	if local {
		return nil, fmt.Errorf("is a directory here, but a template names bundle images (push the bundle, or give its image reference)")
	}
	if err := bundlesource.CheckArg(ref); err != nil {
		return nil, err
	}
	ob, err := b.opener.Open(ctx, ref)
	if err != nil {
		if ob == nil {
			return nil, fmt.Errorf("cannot be pulled: %w (check the reference and your access: --authfile, --ca-file, --use-http)", err)
		}
		return nil, fmt.Errorf("is not a readable bundle: %w", err)
	}
	switch {
	case ob.Labels[indeximage.DatabaseLabel] != "" || ob.Labels[indeximage.ConfigsLabel] != "":
		return nil, fmt.Errorf("is an index image, not a bundle image")
	}
	if ob.Bundle == nil || ob.Bundle.CSV == nil {
		return nil, fmt.Errorf("is not a bundle image: it holds no ClusterServiceVersion under manifests/ (label %s: %q)", bundle.AnnotationMediaType, ob.Labels[bundle.AnnotationMediaType])
	}
	return fbc.RenderBundle(ob.Bundle, ref, b.render)
}

// Prefetch renders refs, several at once, keeping each result (errors
// too) for Render.
func (b *bundles) Prefetch(ctx context.Context, refs []string) {
	seen := map[string]bool{}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)+2)
	var wg sync.WaitGroup
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, _ = b.Render(ctx, ref)
		}()
	}
	wg.Wait()
}
