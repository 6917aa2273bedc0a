package image

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ReplaceTop returns base with its top drop layers taken off and layer put on
// top. hist is the history entry of the new layer; the history entries of the
// dropped layers are removed when the history matches the layers one to one.
// edit, when not nil, changes the config (labels, entrypoint, ...). Like
// AppendLayer, it never reads the base layers it keeps.
func ReplaceTop(base v1.Image, drop int, layer v1.Layer, hist v1.History, edit func(*v1.ConfigFile)) (v1.Image, error) {
	m, err := base.Manifest()
	if err != nil {
		return nil, fmt.Errorf("replace layer: base manifest: %w", err)
	}
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("replace layer: base config: %w", err)
	}
	baseLayers, err := base.Layers()
	if err != nil {
		return nil, fmt.Errorf("replace layer: base layers: %w", err)
	}
	n := len(m.Layers)
	if drop < 0 || drop > n || len(baseLayers) != n {
		return nil, fmt.Errorf("replace layer: cannot drop %d of %d layers", drop, n)
	}
	m = m.DeepCopy()
	cf = cf.DeepCopy()
	keep := n - drop
	m.Layers = m.Layers[:keep]
	if len(cf.RootFS.DiffIDs) == n {
		cf.RootFS.DiffIDs = cf.RootFS.DiffIDs[:keep]
	}
	cf.History = trimHistory(cf.History, n, drop)
	if len(cf.History) == 0 {
		// Without history, give each kept layer an entry so that the new
		// layer's entry lines up with it.
		for range keep {
			cf.History = append(cf.History, v1.History{Created: v1.Time{Time: Epoch}, CreatedBy: "opm"})
		}
	}
	cf.History = append(cf.History, hist)
	if edit != nil {
		edit(cf)
	}
	if m.MediaType == types.DockerManifestSchema2 {
		layer = withMediaType(layer, types.DockerLayer)
	}
	return compose(m, cf, baseLayers[:keep], []v1.Layer{layer}, m.Config.MediaType)
}

// trimHistory removes the entries of the top drop layers when the non-empty
// entries match the n layers; otherwise it leaves the history as it is.
func trimHistory(h []v1.History, n, drop int) []v1.History {
	if drop == 0 {
		return h
	}
	count := 0
	for _, e := range h {
		if !e.EmptyLayer {
			count++
		}
	}
	if count != n {
		return h
	}
	out := make([]v1.History, 0, len(h))
	seen := 0
	for _, e := range h {
		if !e.EmptyLayer {
			seen++
			if seen > n-drop {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// TopLayerHistory returns the history entry of the top layer, when the
// history matches the layers one to one.
func TopLayerHistory(cf *v1.ConfigFile, layers int) (v1.History, bool) {
	count := 0
	var last v1.History
	for _, e := range cf.History {
		if !e.EmptyLayer {
			count++
			last = e
		}
	}
	if count != layers || layers == 0 {
		return v1.History{}, false
	}
	return last, true
}
