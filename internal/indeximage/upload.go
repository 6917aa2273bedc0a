package indeximage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/stream"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/image"
)

// A layerUpload sends the catalog layer to the destination registry while
// buildLayer makes it: the compressed bytes go down a pipe into a blob
// upload as they are written, so that a change of a large index costs
// about the longer of building and sending its layer, not their sum. The
// upload is only a head start. When it fails (a registry that refuses an
// upload of unknown length, a dropped connection), the layer is complete
// in its file all the same and Write pushes it from there, as it pushes
// any layer the registry lacks.
type layerUpload struct {
	pr *io.PipeReader
	pw *io.PipeWriter
	// dead says the upload stopped reading: later bytes go to the file only.
	dead atomic.Bool
	// built is closed once layer (or err) is set.
	built chan struct{}
	layer *dbLayer
	err   error
	// opened says Compressed was called: the pipe is handed out once.
	opened  sync.Once
	done    chan error
	counter *atomic.Int64
}

// errNotBuilt is what the layer's digest is until its last byte is written:
// go-containerregistry then uploads it as a stream and commits it under the
// digest it has at the end.
var errNotBuilt = fmt.Errorf("catalog layer still being written: %w", stream.ErrNotComputed)

// errUploadEnded ends writes into a pipe nobody reads any more.
var errUploadEnded = errors.New("layer upload ended")

// startUpload starts uploading the layer about to be built to dst's
// repository.
func (b *Builder) startUpload(ctx context.Context, dst image.Ref) *layerUpload {
	pr, pw := io.Pipe()
	u := &layerUpload{pr: pr, pw: pw, built: make(chan struct{}), done: make(chan error, 1), counter: &b.pushed}
	go func() {
		err := b.c.UploadLayer(ctx, dst, &growingLayer{u})
		// Whatever happened, nobody reads the pipe any more.
		pr.CloseWithError(errUploadEnded)
		u.done <- err
	}()
	return u
}

// Write passes p to the upload; it never fails, since the layer file is
// what counts.
func (u *layerUpload) Write(p []byte) (int, error) {
	if u.dead.Load() {
		return len(p), nil
	}
	if _, err := u.pw.Write(p); err != nil {
		u.dead.Store(true)
	}
	return len(p), nil
}

// finish tells the upload that the layer is complete (or could not be
// built) and waits for the upload's outcome.
func (u *layerUpload) finish(l *dbLayer, err error) error {
	u.layer, u.err = l, err
	close(u.built)
	if err != nil {
		u.pw.CloseWithError(err)
	} else {
		_ = u.pw.Close()
	}
	return <-u.done
}

// growingLayer is the layer as the upload sees it: no digest or size until
// it is built; its compressed bytes come from the pipe the first time,
// from the finished file after that (a retried request).
type growingLayer struct{ u *layerUpload }

func (g *growingLayer) ready() (*dbLayer, error) {
	select {
	case <-g.u.built:
		return g.u.layer, g.u.err
	default:
		return nil, errNotBuilt
	}
}

func (g *growingLayer) wait() (*dbLayer, error) {
	<-g.u.built
	return g.u.layer, g.u.err
}

func (g *growingLayer) Digest() (v1.Hash, error) {
	l, err := g.ready()
	if err != nil {
		return v1.Hash{}, err
	}
	return l.digest, nil
}

func (g *growingLayer) Size() (int64, error) {
	l, err := g.ready()
	if err != nil {
		return 0, err
	}
	return l.size, nil
}

func (g *growingLayer) DiffID() (v1.Hash, error) {
	l, err := g.wait()
	if err != nil {
		return v1.Hash{}, err
	}
	return l.diffID, nil
}

// MediaType only matters to the upload's logging: blobs carry none.
func (g *growingLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

func (g *growingLayer) Compressed() (io.ReadCloser, error) {
	var rc io.ReadCloser
	g.u.opened.Do(func() { rc = g.u.pr })
	if rc == nil {
		l, err := g.wait()
		if err != nil {
			return nil, err
		}
		f, err := os.Open(l.file)
		if err != nil {
			return nil, err
		}
		rc = f
	}
	return &countingReader{ReadCloser: rc, n: g.u.counter}, nil
}

func (g *growingLayer) Uncompressed() (io.ReadCloser, error) {
	l, err := g.wait()
	if err != nil {
		return nil, err
	}
	return l.Uncompressed()
}
