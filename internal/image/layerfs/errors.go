// Package layerfs unpacks image layers into an in-memory filesystem,
// refusing hostile entries. It has few dependencies so that fuzzing it is fast.
package layerfs

import (
	"errors"
	"fmt"
)

// LimitHint names the flag that raises the size cap, for messages.
const LimitHint = "--max-layer-size"

// TotalHint names the flag that raises the cap on an image's files, for messages.
const TotalHint = "--max-image-size"

// ErrUnsafeLayer is wrapped by every refusal of a layer's content, so callers
// can tell a hostile or broken image from a transport failure.
var ErrUnsafeLayer = errors.New("unsafe layer")

// LayerError names the layer and entry a refusal is about.
type LayerError struct {
	Layer  string // layer digest
	Entry  string // tar entry name as found in the layer ("" for the whole layer)
	Reason string
}

func (e *LayerError) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("layer %s: %s", e.Layer, e.Reason)
	}
	return fmt.Sprintf("layer %s: entry %q: %s", e.Layer, e.Entry, e.Reason)
}

func (e *LayerError) Unwrap() error { return ErrUnsafeLayer }

// Errorf builds a *LayerError.
func Errorf(layer, entry, format string, args ...any) error {
	return &LayerError{Layer: layer, Entry: entry, Reason: fmt.Sprintf(format, args...)}
}

// HumanSize prints a byte count the way people read it.
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
