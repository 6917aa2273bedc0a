package image

import (
	"fmt"
	"io/fs"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BuildBundleImageFrom builds a bundle image on top of base (upstream's
// `alpha bundle build --base-image`, whose bundle.Dockerfile starts
// FROM base): base's layers unchanged, then the one bundle layer, with
// labels merged over base's. A nil base builds FROM scratch, exactly as
// BuildBundleImage. Base layers are not read (see AppendLayer).
func BuildBundleImageFrom(base v1.Image, bundle fs.FS, labels map[string]string) (v1.Image, error) {
	scratch, err := BuildBundleImage(bundle, labels)
	if err != nil || base == nil {
		return scratch, err
	}
	layers, err := scratch.Layers()
	if err != nil {
		return nil, fmt.Errorf("build bundle image: %w", err)
	}
	img, err := AppendLayer(base, layers[0], labels)
	if err != nil {
		return nil, fmt.Errorf("build bundle image on its base image: %w", err)
	}
	return img, nil
}
