// Package mirror copies a catalog image and every image its bundles need
// to a registry, or to an OCI layout directory carried into a disconnected
// network and from there to its registry, and writes what a cluster needs
// to pull through the mirror (mirror sets, a CatalogSource, a
// ClusterCatalog).
package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containers/image/v5/docker/reference"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/image"
)

// Roles of the images a mirror copies.
const (
	RoleCatalog = "catalog"
	RoleImage   = "image"
)

// Annotations on a mirror directory's index.json entries.
const (
	// AnnotationRole is "catalog" on the catalog image's entry.
	AnnotationRole = "io.opmkit.mirror.role"
	// refName is the OCI annotation naming an entry: its source reference.
	refName = "org.opencontainers.image.ref.name"
)

// ReportFile is the report a mirror to a directory leaves in it, read by
// the mirror from it (for the bundles that use each image).
const ReportFile = "opm-mirror.json"

// Item is one image to copy.
type Item struct {
	// Source is the pull spec (registry reference) as the catalog lists it.
	Source string `json:"source"`
	// From is where the bytes are read, when not Source (a local catalog
	// image, a mirror directory's entry).
	From string              `json:"-"`
	Role string              `json:"role"`
	Uses []catalogimages.Use `json:"uses,omitempty"`
}

// Result is what became of one Item.
type Result struct {
	Item
	// Target is the reference at the destination, by digest.
	Target string `json:"target,omitempty"`
	// Tag is the tag also set at the destination ("" when the source
	// names no tag).
	Tag    string `json:"tag,omitempty"`
	Digest string `json:"digest,omitempty"`
	// Copied is false when everything was already at the destination.
	Copied    bool     `json:"copied"`
	Blobs     int      `json:"blobsCopied"`
	Present   int      `json:"blobsPresent"`
	Bytes     int64    `json:"bytes"`
	Referrers []string `json:"referrers,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// Report is a whole run.
type Report struct {
	// To is the registry and prefix, or the directory, copied to.
	To      string   `json:"to"`
	Catalog string   `json:"catalog,omitempty"`
	Images  []Result `json:"images"`
	Failed  int      `json:"failed"`
	Bytes   int64    `json:"bytes"`
	Blobs   int      `json:"blobsCopied"`
	Seconds float64  `json:"seconds"`
}

// Counters are a run's progress, updated as it goes, for a progress line.
type Counters struct {
	Done, Failed, Bytes atomic.Int64
}

// Options control a run.
type Options struct {
	// To is REGISTRY[/PREFIX]; ToDir an OCI layout directory. One is set.
	To, ToDir string
	// Concurrency is how many images are copied at once (at least 1).
	Concurrency int
	// FailFast stops at the first image that fails.
	FailFast bool
	// Signatures copies cosign signatures, attestations and OCI referrers.
	Signatures bool
	// Counters, when set, are kept up to date while the run goes.
	Counters *Counters
}

// Plan lists what mirroring the catalog image catalogRef copies: the
// catalog, then every image its bundles need (images: catalogimages' list
// of it), each once per pull spec.
func Plan(catalogRef string, images []catalogimages.Image) []Item {
	items := []Item{{Source: catalogRef, Role: RoleCatalog}}
	for _, im := range images {
		items = append(items, Item{Source: im.Image, Role: RoleImage, Uses: im.Uses})
		for _, also := range im.Also {
			items = append(items, Item{Source: also, Role: RoleImage, Uses: im.Uses})
		}
	}
	return items
}

// Target maps a source pull spec to its place under to (REGISTRY[/PREFIX]):
// the repository path without the source's registry, then the tag the
// source names (latest for a bare name), if any, and the digest, if any.
func Target(to, source string) (repo, tag, digest string, err error) {
	named, err := reference.ParseNormalizedNamed(source)
	if err != nil {
		return "", "", "", fmt.Errorf("image %q: %w", source, err)
	}
	repo = strings.TrimSuffix(to, "/") + "/" + reference.Path(named)
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		digest = d.Digest().String()
	} else if tag == "" {
		tag = "latest" // what a pull of the bare name asks for
	}
	return repo, tag, digest, nil
}

// Run copies items with cl's registries configuration, credentials and
// signature policy. The returned error is for the run as a whole (a bad
// destination, a cancelled context); an image that fails is a Result with
// Error set, counted in Report.Failed.
func Run(ctx context.Context, cl *image.Client, items []Item, o Options) (*Report, error) {
	if (o.To == "") == (o.ToDir == "") {
		return nil, errors.New("mirror to a registry (--to) or to a directory (--to-dir), one of the two")
	}
	if o.To != "" {
		if _, err := reference.ParseNormalizedNamed(strings.TrimSuffix(o.To, "/") + "/x"); err != nil {
			return nil, fmt.Errorf("--to %q is not REGISTRY[/PREFIX]: %w", o.To, err)
		}
	}
	start := time.Now()
	cp := cl.NewCopier()
	rep := &Report{To: o.To, Images: make([]Result, len(items))}
	if o.ToDir != "" {
		rep.To = o.ToDir
	}
	st := o.Counters
	if st == nil {
		st = &Counters{}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(o.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := copyOne(runCtx, cp, items[i], o, func(n int64) { st.Bytes.Add(n) })
				if r.Error != "" {
					st.Failed.Add(1)
					if o.FailFast {
						cancel()
					}
				}
				st.Done.Add(1)
				rep.Images[i] = r
			}
		}()
	}
feed:
	for i := range items {
		select {
		case next <- i:
		case <-runCtx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	closeErr := cp.Close()

	for i := range rep.Images {
		r := &rep.Images[i]
		if r.Source == "" { // never started: fail-fast or cancelled
			*r = Result{Item: items[i], Error: "not copied: the run stopped before this image"}
		}
		if r.Error != "" {
			rep.Failed++
		}
		if r.Role == RoleCatalog && r.Error == "" {
			rep.Catalog = r.Target
		}
		rep.Bytes += r.Bytes
		rep.Blobs += r.Blobs
	}
	rep.Seconds = time.Since(start).Seconds()
	if closeErr != nil {
		return rep, fmt.Errorf("write %s: %w", o.ToDir, closeErr)
	}
	if o.ToDir != "" {
		if err := writeJSON(filepath.Join(o.ToDir, ReportFile), rep); err != nil {
			return rep, err
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return rep, nil
}

func copyOne(ctx context.Context, cp *image.Copier, it Item, o Options, progress func(int64)) Result {
	r := Result{Item: it}
	fail := func(err error) Result {
		r.Error = err.Error()
		return r
	}
	from := it.From
	if from == "" {
		from = it.Source
	}
	src, err := image.ParseReference(from)
	if err != nil {
		return fail(err)
	}
	copyOpts := image.CopyOptions{Referrers: o.Signatures, Progress: progress}
	var dst image.Ref
	var repo string
	if o.ToDir != "" {
		dst = image.Ref{Transport: image.TransportOCI, Path: o.ToDir, Tag: layoutName(it.Source)}
		if it.Role == RoleCatalog {
			copyOpts.Annotations = map[string]string{AnnotationRole: RoleCatalog}
		}
	} else {
		var err error
		if repo, r.Tag, _, err = Target(o.To, it.Source); err != nil {
			return fail(err)
		}
		if dst, err = image.ParseReference(repo); err != nil {
			return fail(fmt.Errorf("target %s: %w", repo, err))
		}
		copyOpts.Tag = r.Tag
	}
	res, err := cp.Copy(ctx, src, dst, copyOpts)
	r.Digest = res.Digest.String()
	r.Blobs, r.Present, r.Bytes, r.Referrers = res.BlobsCopied, res.BlobsPresent, res.Bytes, res.Referrers
	r.Copied = res.ManifestsCopied > 0 || res.BlobsCopied > 0
	if err != nil {
		return fail(err)
	}
	if want := catalogimages.Digest(it.Source); want != "" && want != r.Digest {
		return fail(fmt.Errorf("%s arrived with digest %s", it.Source, r.Digest))
	}
	if o.ToDir != "" {
		r.Target = "oci:" + o.ToDir + ":" + dst.Tag
	} else {
		r.Target = repo + "@" + r.Digest
	}
	return r
}

// layoutName names an image's entry in a mirror directory: its source
// reference, normalized (docker.io/library/x:1 for x:1).
func layoutName(source string) string {
	named, err := reference.ParseNormalizedNamed(source)
	if err != nil {
		return source
	}
	return named.String()
}

// FromDir lists what a mirror directory holds, as items to copy on: every
// entry of its index.json (images, the catalog, attached signatures), with
// the bundles that use each from the report left beside them. missing are
// the images the run that wrote the directory could not copy into it.
func FromDir(dir string) (items []Item, missing []Result, err error) {
	entries, err := image.LayoutEntries(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("mirror directory %s: %w (was it written by opm alpha mirror --to-dir?)", dir, err)
	}
	uses := map[string][]catalogimages.Use{}
	var prev Report
	if raw, err := os.ReadFile(filepath.Join(dir, ReportFile)); err == nil {
		if err := json.Unmarshal(raw, &prev); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, ReportFile), err)
		}
		for _, r := range prev.Images {
			uses[layoutName(r.Source)] = r.Uses
		}
	}
	held := map[string]bool{}
	for _, e := range entries {
		name := e.Annotations[refName]
		if name == "" {
			continue
		}
		held[name] = true
		role := RoleImage
		if e.Annotations[AnnotationRole] == RoleCatalog {
			role = RoleCatalog
		}
		items = append(items, Item{Source: name, From: "oci:" + dir + ":" + name, Role: role, Uses: uses[name]})
	}
	if len(items) == 0 {
		return nil, nil, fmt.Errorf("mirror directory %s holds no images", dir)
	}
	for _, r := range prev.Images {
		if r.Error != "" && !held[layoutName(r.Source)] {
			r.Error = "not in " + dir + ": " + r.Error
			missing = append(missing, r)
		}
	}
	// The catalog first, as a mirror to a registry copies it.
	sort.SliceStable(items, func(i, j int) bool { return items[i].Role == RoleCatalog && items[j].Role != RoleCatalog })
	return items, missing, nil
}

func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(raw, '\n'))
}
