package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
)

// bundleOpener is the one way commands open a bundle named on the command
// line: an existing directory is a directory, anything else an image
// reference (registry, oci:, oci-archive:, docker-archive:). The image
// client is made on first use, so directory-only runs never touch registry
// configuration.
type bundleOpener struct {
	imageOpts image.Options

	once   sync.Once
	client *image.Client
	err    error
}

// openedBundle is a loaded bundle and where it came from.
type openedBundle struct {
	Bundle *bundle.Bundle
	// Local is true for a directory, false for an image.
	Local bool
	// Labels are the image's config labels (nil for a directory).
	Labels map[string]string
}

// isLocal reports whether arg names an existing directory.
func isLocal(arg string) (bool, error) {
	st, err := os.Stat(arg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !st.IsDir():
		return false, fmt.Errorf("%s: not a directory (a bundle is a directory holding manifests/ and metadata/, or an image reference)", arg)
	}
	return true, nil
}

// checkArg refuses early an argument that is neither a directory nor
// something that could be an image reference, so a mistyped path does not
// turn into a registry error.
func checkArg(arg string) error {
	local, err := isLocal(arg)
	if err != nil || local {
		return err
	}
	if !image.LooksLikeReference(arg) {
		return fmt.Errorf("%s: no such directory, and not an image reference", arg)
	}
	if _, err := image.ParseReference(arg); err != nil {
		return fmt.Errorf("%s: no such directory, and not a valid image reference: %w", arg, err)
	}
	return nil
}

func (o *bundleOpener) imageClient() (*image.Client, error) {
	o.once.Do(func() {
		opts := o.imageOpts
		if err := opts.Validate(); err != nil {
			o.err = err
			return
		}
		o.client, o.err = image.NewClient(opts)
	})
	return o.client, o.err
}

// Open loads the bundle arg names. Like bundle.Load, it may return a bundle
// together with an error describing what could not be read.
func (o *bundleOpener) Open(ctx context.Context, arg string) (*openedBundle, error) {
	local, err := isLocal(arg)
	if err != nil {
		return nil, err
	}
	if local {
		b, err := bundle.LoadDir(arg)
		return &openedBundle{Bundle: b, Local: true}, err
	}
	if err := checkArg(arg); err != nil {
		return nil, err
	}
	c, err := o.imageClient()
	if err != nil {
		return nil, err
	}
	im, err := c.OpenString(ctx, arg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = im.Close() }()
	fsys, err := im.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("read bundle image %s: %w", arg, err)
	}
	defer func() { _ = fsys.Close() }()
	// Load reads every file into memory, so the image can be closed after.
	b, err := bundle.Load(fsys)
	labels := im.Labels()
	if b != nil {
		// The image-labels rule compares them with annotations.yaml.
		b.Labels = labels
	}
	return &openedBundle{Bundle: b, Labels: labels}, err
}
