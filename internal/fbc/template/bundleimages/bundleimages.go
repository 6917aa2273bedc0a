// Package bundleimages renders the bundle images catalog templates name:
// through one image client (made on first use, so credentials are read
// once and connections shared), each image once however often it is
// named, several at once when fetched ahead (Prefetch). Its Render is a
// template.RenderBundle.
package bundleimages

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
)

// Renderer renders bundle images to olm.bundle blobs.
type Renderer struct {
	newClient func() (*image.Client, error)
	render    fbc.RenderOptions
	// OnDone, when set, is called once per distinct image rendered (for a
	// progress line); it must be safe for concurrent use.
	OnDone func()
	// KeepBundles keeps each loaded bundle, so that RenderAt renders it at
	// other migrate levels without pulling it again (set before use).
	KeepBundles bool
	// RegistryOnly refuses images named by another transport than a
	// registry (oci:, oci-archive:, dir: ...): a template, as a catalog,
	// names images in registries, never files of the machine rendering it.
	RegistryOnly bool

	clientOnce sync.Once
	client     *image.Client
	clientErr  error

	mu   sync.Mutex
	done map[string]*result
}

type result struct {
	once sync.Once
	b    *bundle.Bundle // with KeepBundles
	blob *fbc.Bundle
	err  error

	mu sync.Mutex
	at map[fbc.MigrateLevel]*fbc.Bundle
}

// New renders through the client newClient makes (once, on first use).
func New(newClient func() (*image.Client, error), render fbc.RenderOptions) *Renderer {
	return &Renderer{newClient: newClient, render: render, done: map[string]*result{}}
}

// Render is the olm.bundle blob of the bundle image ref, rendered as opm
// render renders it. It is safe for concurrent use; each caller gets its
// own copy of the blob.
func (r *Renderer) Render(ctx context.Context, ref string) (*fbc.Bundle, error) {
	res := r.get(ctx, ref)
	if res.err != nil {
		return nil, res.err
	}
	c := *res.blob
	return &c, nil
}

// get loads ref once.
func (r *Renderer) get(ctx context.Context, ref string) *result {
	r.mu.Lock()
	res := r.done[ref]
	if res == nil {
		res = &result{}
		r.done[ref] = res
	}
	r.mu.Unlock()
	res.once.Do(func() {
		var b *bundle.Bundle
		b, res.err = r.load(ctx, ref)
		if res.err == nil {
			res.blob, res.err = fbc.RenderBundle(b, ref, r.render)
		}
		if r.KeepBundles {
			res.b = b
		}
		if r.OnDone != nil {
			r.OnDone()
		}
	})
	return res
}

// RenderAt is Render at migrate level instead of the Renderer's own: the
// same pulls serve catalogs of several levels (KeepBundles must be set).
func (r *Renderer) RenderAt(level fbc.MigrateLevel) func(ctx context.Context, ref string) (*fbc.Bundle, error) {
	if level == r.render.Migrate {
		return r.Render
	}
	return func(ctx context.Context, ref string) (*fbc.Bundle, error) {
		res := r.get(ctx, ref)
		if res.err != nil {
			return nil, res.err
		}
		res.mu.Lock()
		defer res.mu.Unlock()
		blob := res.at[level]
		if blob == nil {
			if res.b == nil {
				return nil, fmt.Errorf("bundle image %s: rendered without KeepBundles, cannot render it at %s", ref, level)
			}
			opts := r.render
			opts.Migrate = level
			var err error
			if blob, err = fbc.RenderBundle(res.b, ref, opts); err != nil {
				return nil, err
			}
			if res.at == nil {
				res.at = map[fbc.MigrateLevel]*fbc.Bundle{}
			}
			res.at[level] = blob
		}
		c := *blob
		return &c, nil
	}
}

func (r *Renderer) load(ctx context.Context, ref string) (*bundle.Bundle, error) {
	if st, err := os.Stat(ref); err == nil && st.IsDir() {
		return nil, fmt.Errorf("is a directory here, but a template names bundle images (push the bundle, or give its image reference)")
	}
	if r.RegistryOnly {
		if _, err := catalogimages.RegistryRef(ref); err != nil {
			return nil, fmt.Errorf("is refused: %w", err)
		}
	}
	if _, err := image.ParseReference(ref); err != nil {
		return nil, fmt.Errorf("is not a valid image reference: %w", err)
	}
	r.clientOnce.Do(func() { r.client, r.clientErr = r.newClient() })
	if r.clientErr != nil {
		return nil, r.clientErr
	}
	im, err := r.client.OpenString(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("cannot be pulled: %w (check the reference and your access: --authfile, --ca-file, --use-http)", err)
	}
	defer func() { _ = im.Close() }()
	labels := im.Labels()
	if labels[indeximage.DatabaseLabel] != "" || labels[indeximage.ConfigsLabel] != "" {
		return nil, fmt.Errorf("is an index image, not a bundle image")
	}
	fsys, err := im.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	defer func() { _ = fsys.Close() }()
	b, err := bundle.Load(fsys)
	if err != nil {
		return nil, fmt.Errorf("is not a readable bundle: %w", err)
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("is not a bundle image: it holds no ClusterServiceVersion under manifests/ (label %s: %q)", bundle.AnnotationMediaType, labels[bundle.AnnotationMediaType])
	}
	b.Labels = labels
	return b, nil
}

// Prefetch renders refs, several at once, keeping each result (errors
// too) for Render.
func (r *Renderer) Prefetch(ctx context.Context, refs []string) {
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
			_, _ = r.Render(ctx, ref)
		}()
	}
	wg.Wait()
	r.shareCauses(refs)
}

// shareCauses gives a registry's reason that several images failed for
// (image.SharedCause) in full for the first of them in refs' order, the
// order a template names them in, and as a pointer to it for the others:
// one cause, said once.
func (r *Renderer) shareCauses(refs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first := map[string]string{} // cause → the first image failing for it
	seen := map[string]bool{}
	for _, ref := range refs {
		res := r.done[ref]
		if seen[ref] || res == nil || res.err == nil {
			continue
		}
		seen[ref] = true
		_, cause, ok := image.SharedCause(res.err)
		if !ok {
			continue
		}
		if f, ok := first[cause]; ok {
			res.err = &sameCause{as: f, err: res.err}
			continue
		}
		first[cause] = ref
	}
}

// sameCause is an image that failed for the reason given in full for
// another one.
type sameCause struct {
	as  string
	err error
}

func (e *sameCause) Error() string {
	return fmt.Sprintf("cannot be pulled, for the registry's reason given for %s", e.as)
}
func (e *sameCause) Unwrap() error { return e.err }

// Distinct counts the distinct references of refs.
func Distinct(refs []string) int {
	seen := map[string]bool{}
	for _, r := range refs {
		seen[r] = true
	}
	return len(seen)
}
