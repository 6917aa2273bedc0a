package registrytest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The repositories of a Hostile registry, each holding tag "1", and how
// each misbehaves. A pull of any of them must end with an error, in
// bounded time and memory, having written nothing larger than opm's
// limits.
const (
	// HostileGood is a well-formed one-layer image; HostileTagLoop,
	// HostileTagPages and HostileTagBody serve it too.
	HostileGood = "good/img"
	// HostileManifestLoop redirects its manifest to itself, forever.
	HostileManifestLoop = "loop/manifest"
	// HostileBlobLoop redirects its layer to itself, forever.
	HostileBlobLoop = "loop/blob"
	// HostileHugeLayer declares a 1 TiB layer, and sends zeros for it
	// for as long as anyone reads.
	HostileHugeLayer = "huge/layer"
	// HostileHugeManifest is a 99 MB manifest (announced by its
	// Content-Length); HostileHugeManifestChunked the same, unannounced.
	HostileHugeManifest        = "huge/manifest"
	HostileHugeManifestChunked = "huge/manifest-chunked"
	// HostileSlowLayer sends its layer one byte every Options.SlowEvery.
	HostileSlowLayer = "slow/layer"
	// HostileStallLayer sends a few bytes of its layer, then nothing.
	HostileStallLayer = "stall/layer"
	// HostileTagLoop's tag list names itself as its next page (Link).
	HostileTagLoop = "tags/loop"
	// HostileTagPages's tag list has a next page, always a new one.
	HostileTagPages = "tags/pages"
	// HostileTagBody's tag list is one endless body.
	HostileTagBody = "tags/body"
)

// HugeManifestSize is the size of HostileHugeManifest.
const HugeManifestSize = 99_000_000

// HugeLayerSize is what HostileHugeLayer declares.
const HugeLayerSize int64 = 1 << 40

// HostileOptions tune a Hostile registry.
type HostileOptions struct {
	// SlowEvery is how often HostileSlowLayer sends a byte (default 3 s).
	SlowEvery time.Duration
	// Labels go into every image's config (a bundle's or an index
	// image's labels, so that commands go on to read the layers).
	Labels map[string]string
}

// Hostile is an HTTP registry (plain HTTP: opm needs --use-http) that
// serves the repositories above; counters say what it was asked.
type Hostile struct {
	Addr string
	// Requests counts every request; TagPages the tag-list pages served;
	// Sent the body bytes sent.
	Requests, TagPages, Sent atomic.Int64

	opts HostileOptions
	srv  *httptest.Server
	done chan struct{}
	// Each repository has its own layer (a copy must not find it at the
	// destination already), config and manifest.
	images map[string]*hostileImage
}

type hostileImage struct {
	manifest, config, layer []byte
}

// StartHostile starts a Hostile registry, stopped when the test ends.
func StartHostile(t testing.TB, o HostileOptions) *Hostile {
	t.Helper()
	if o.SlowEvery == 0 {
		o.SlowEvery = 3 * time.Second
	}
	h := &Hostile{opts: o, done: make(chan struct{})}
	h.images = map[string]*hostileImage{}
	for _, repo := range []string{HostileGood, HostileManifestLoop, HostileBlobLoop, HostileHugeLayer, HostileHugeManifest,
		HostileHugeManifestChunked, HostileSlowLayer, HostileStallLayer, HostileTagLoop, HostileTagPages, HostileTagBody} {
		h.images[repo] = newHostileImage(repo, o.Labels)
	}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	h.Addr = strings.TrimPrefix(h.srv.URL, "http://")
	t.Cleanup(func() {
		close(h.done) // ends the endless and stalled bodies
		h.srv.CloseClientConnections()
		h.srv.Close()
	})
	return h
}

// Ref is repo:1 at the registry.
func (h *Hostile) Ref(repo string) string { return h.Addr + "/" + repo + ":1" }

func digestOf(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// newHostileImage is a one-layer image whose layer holds 64 KiB naming
// repo: a slow layer takes long.
func newHostileImage(repo string, labels map[string]string) *hostileImage {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	body := bytes.Repeat([]byte(repo+"\n"), (64<<10)/(len(repo)+1))
	_ = tw.WriteHeader(&tar.Header{Name: "data", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(body)
	_ = tw.Close()
	im := &hostileImage{layer: tb.Bytes()}
	im.config, _ = json.Marshal(map[string]any{"architecture": "amd64", "os": "linux", "config": map[string]any{"Labels": labels},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{digestOf(im.layer)}}})
	im.manifest = im.manifestWith(digestOf(im.layer), int64(len(im.layer)))
	return im
}

func (im *hostileImage) manifestWith(layerDigest string, layerSize int64) []byte {
	m := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digestOf(im.config), "size": len(im.config)},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": layerSize}},
	}
	raw, _ := json.Marshal(m)
	return raw
}

// HugeLayerDigest names HostileHugeLayer's 1 TiB layer (no such bytes
// exist).
var HugeLayerDigest = "sha256:" + strings.Repeat("1e", 32)

func (h *Hostile) serve(w http.ResponseWriter, r *http.Request) {
	h.Requests.Add(1)
	p := r.URL.Path
	if p == "/v2/" || p == "/v2" {
		w.WriteHeader(http.StatusOK)
		return
	}
	rest, ok := strings.CutPrefix(p, "/v2/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	var repo, kind, ref string
	switch {
	case strings.HasSuffix(rest, "/tags/list"):
		repo, kind = strings.TrimSuffix(rest, "/tags/list"), "tags"
	default:
		for _, k := range []string{"/manifests/", "/blobs/", "/referrers/"} {
			if i := strings.LastIndex(rest, k); i >= 0 {
				repo, kind, ref = rest[:i], strings.Trim(k, "/"), rest[i+len(k):]
				break
			}
		}
	}
	switch kind {
	case "manifests":
		h.serveManifest(w, r, repo, ref)
	case "blobs":
		h.serveBlob(w, r, repo, ref)
	case "tags":
		h.serveTags(w, r, repo)
	default: // no referrers API
		http.NotFound(w, r)
	}
}

func (h *Hostile) serveManifest(w http.ResponseWriter, r *http.Request, repo, ref string) {
	im := h.images[repo]
	if im == nil {
		http.NotFound(w, r)
		return
	}
	raw := im.manifest
	switch repo {
	case HostileManifestLoop:
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
		return
	case HostileHugeLayer:
		raw = im.manifestWith(HugeLayerDigest, HugeLayerSize)
	case HostileHugeManifest, HostileHugeManifestChunked:
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		if repo == HostileHugeManifest {
			w.Header().Set("Content-Length", strconv.Itoa(HugeManifestSize))
		}
		if r.Method == http.MethodHead {
			return
		}
		h.send(w, io.MultiReader(strings.NewReader(`{"schemaVersion":2,"annotations":{"a":"`),
			io.LimitReader(zeros{'a'}, int64(HugeManifestSize-len(`{"schemaVersion":2,"annotations":{"a":"`)-len(`"}}`))), strings.NewReader(`"}}`)))
		return
	}
	if ref != "1" && ref != digestOf(raw) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	w.Header().Set("Docker-Content-Digest", digestOf(raw))
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	if r.Method != http.MethodHead {
		h.send(w, bytes.NewReader(raw))
	}
}

func (h *Hostile) serveBlob(w http.ResponseWriter, r *http.Request, repo, dgst string) {
	im := h.images[repo]
	switch {
	case im == nil:
		http.NotFound(w, r)
		return
	case dgst == digestOf(im.config):
		w.Header().Set("Content-Length", strconv.Itoa(len(im.config)))
		h.send(w, bytes.NewReader(im.config))
		return
	case repo == HostileHugeLayer && dgst == HugeLayerDigest:
		w.Header().Set("Content-Length", strconv.FormatInt(HugeLayerSize, 10))
		h.send(w, zeros{0})
		return
	case dgst != digestOf(im.layer):
		http.NotFound(w, r)
		return
	}
	switch repo {
	case HostileBlobLoop:
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
	case HostileSlowLayer:
		w.Header().Set("Content-Length", strconv.Itoa(len(im.layer)))
		for _, b := range im.layer {
			if !h.write(w, []byte{b}) {
				return
			}
			select {
			case <-time.After(h.opts.SlowEvery):
			case <-r.Context().Done():
				return
			case <-h.done:
				return
			}
		}
	case HostileStallLayer:
		w.Header().Set("Content-Length", strconv.Itoa(len(im.layer)))
		if h.write(w, im.layer[:1024]) {
			select {
			case <-r.Context().Done():
			case <-h.done:
			}
		}
	default:
		w.Header().Set("Content-Length", strconv.Itoa(len(im.layer)))
		h.send(w, bytes.NewReader(im.layer))
	}
}

func (h *Hostile) serveTags(w http.ResponseWriter, r *http.Request, repo string) {
	w.Header().Set("Content-Type", "application/json")
	switch repo {
	case HostileTagLoop:
		h.TagPages.Add(1)
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, r.URL.RequestURI()))
	case HostileTagPages:
		n := h.TagPages.Add(1)
		w.Header().Set("Link", fmt.Sprintf(`</v2/%s/tags/list?n=1&last=t%d>; rel="next"`, repo, n))
	case HostileTagBody:
		h.TagPages.Add(1)
		h.send(w, io.MultiReader(strings.NewReader(`{"name":"`+repo+`","tags":["`), zeros{'t'}))
		return
	}
	h.send(w, strings.NewReader(`{"name":"`+repo+`","tags":["1"]}`))
}

// send copies body to w until it ends, the client goes or the registry stops.
func (h *Hostile) send(w http.ResponseWriter, body io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 && !h.write(w, buf[:n]) {
			return
		}
		if err != nil {
			return
		}
	}
}

func (h *Hostile) write(w http.ResponseWriter, b []byte) bool {
	select {
	case <-h.done:
		return false
	default:
	}
	n, err := w.Write(b)
	h.Sent.Add(int64(n))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err == nil
}

// zeros is an endless stream of one byte.
type zeros struct{ b byte }

func (z zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = z.b
	}
	return len(p), nil
}
