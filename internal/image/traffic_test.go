package image

import (
	"context"
	"testing"

	"github.com/opmkit/opm/internal/registrytest"
)

// Options.Traffic counts what a push sends and a pull receives, so that a
// progress line can show bytes moved.
func TestTrafficCountsBodies(t *testing.T) {
	r := registrytest.Start(t)
	tr := &Traffic{}
	c := mustClient(t, Options{UseHTTP: true, Traffic: tr})
	img, err := BuildBundleImage(testBundle(), testLabels())
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	size, err := layers[0].Size()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Write(ctx, img, mustRef(t, r.Ref("traffic/b:1"))); err != nil {
		t.Fatal(err)
	}
	if got := tr.Sent.Load(); got < size {
		t.Errorf("push sent %d bytes, want at least the layer's %d", got, size)
	}

	// A second client shares the counter through its options.
	c2 := mustClient(t, Options{UseHTTP: true, Traffic: tr})
	before := tr.Received.Load()
	im, err := c2.Open(ctx, mustRef(t, r.Ref("traffic/b:1")))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = im.Close() }()
	if tr.Received.Load() <= before {
		t.Errorf("opening the image received nothing: %d then %d", before, tr.Received.Load())
	}
}
