package bundleimages_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template/bundleimages"
	"github.com/opmkit/opm/internal/fbc/template/templatetest"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

// TestRenderer: one client for the whole run, each image rendered once
// however often and from however many goroutines it is asked for, errors
// kept as results, and every caller its own copy of the blob.
func TestRenderer(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	var refs []string
	for _, v := range []string{"0.1.0", "0.2.0", "0.3.0"} {
		refs = append(refs, templatetest.Push(t, templatetest.Version(t, "example-operator.v"+v, v, "", ""), reg.Ref("op-bundle:"+v)))
	}
	missing := reg.Ref("op-bundle:9.9.9")
	var clients, done atomic.Int32
	r := bundleimages.New(func() (*image.Client, error) {
		clients.Add(1)
		return image.NewClient(image.Options{UseHTTP: true})
	}, fbc.RenderOptions{})
	r.OnDone = func() { done.Add(1) }
	asked := append(append(append([]string{}, refs...), refs...), missing, missing)
	assert.Equal(t, 4, bundleimages.Distinct(asked))
	r.Prefetch(context.Background(), asked)
	assert.Equal(t, int32(1), clients.Load(), "one client")
	assert.Equal(t, int32(4), done.Load(), "each distinct image once")

	var wg sync.WaitGroup
	for _, ref := range asked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = r.Render(context.Background(), ref)
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(4), done.Load(), "cached: nothing rendered again")

	a, err := r.Render(context.Background(), refs[1])
	require.NoError(t, err)
	assert.Equal(t, "example-operator.v0.2.0", a.Name)
	assert.Equal(t, refs[1], a.Image)
	a.Name = "changed"
	b, err := r.Render(context.Background(), refs[1])
	require.NoError(t, err)
	assert.Equal(t, "example-operator.v0.2.0", b.Name, "callers get copies")

	_, err = r.Render(context.Background(), missing)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "cannot be pulled: "), err.Error())
	_, err = r.Render(context.Background(), "Not A Reference")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a valid image reference")
}

// TestRendererRegistryOnly (issue 35): a template names bundle images in
// registries; with RegistryOnly a bundle in an OCI layout on this machine
// is refused (without it, as for a bundle the user names, it renders).
func TestRendererRegistryOnly(t *testing.T) {
	t.Parallel()
	ref := "oci:" + t.TempDir() + "/layout:1"
	templatetest.Push(t, templatetest.Version(t, "example-operator.v0.1.0", "0.1.0", "", ""), ref)
	newClient := func() (*image.Client, error) { return image.NewClient(image.Options{}) }

	_, err := bundleimages.New(newClient, fbc.RenderOptions{}).Render(context.Background(), ref)
	require.NoError(t, err, "a local bundle renders when allowed")

	r := bundleimages.New(newClient, fbc.RenderOptions{})
	r.RegistryOnly = true
	_, err = r.Render(context.Background(), ref)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the oci: transport reads this machine's files")
}
