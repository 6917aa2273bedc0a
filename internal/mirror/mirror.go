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
	// RoleAdditional is an ImageSetConfiguration's mirror.additionalImages.
	RoleAdditional = "additional"
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
	// image).
	From string `json:"-"`
	// Dir is the mirror directory the image is read from, its entry named
	// after Source (FromDir's items); nothing is then read from a registry.
	Dir string `json:"-"`
	// Digest is the digest the image must arrive with, when known (what a
	// mirror directory's report says it holds).
	Digest string              `json:"-"`
	Role   string              `json:"role"`
	Uses   []catalogimages.Use `json:"uses,omitempty"`
	// Attached are the entries of Dir attached to the image (signatures,
	// attestations, referrers), copied with it.
	Attached []Attachment `json:"-"`
	// Rebuilt: From is a catalog image filtered from Source (opm alpha
	// mirror --config), whose digest is its own, not Source's.
	Rebuilt bool `json:"rebuilt,omitempty"`
}

// Attachment is an artifact attached to an image in a mirror directory:
// Name is the tag (sha256-HEX.sig) or the digest it is known by.
type Attachment struct {
	Name, Digest string
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
	// Copied is true when this run completed the image at the
	// destination, false when it was there already or did not arrive
	// whole (Error says why; Blobs and Bytes what of it was written).
	Copied    bool     `json:"copied"`
	Blobs     int      `json:"blobsCopied"`
	Present   int      `json:"blobsPresent"`
	Bytes     int64    `json:"bytes"`
	Referrers []string `json:"referrers,omitempty"`
	// Attached maps each of Referrers to its manifest's digest (what a
	// mirror directory's entries are checked against).
	Attached map[string]string `json:"attached,omitempty"`
	Error    string            `json:"error,omitempty"`
	// cut: the image did not arrive because the run stopped.
	cut bool
}

// Cut says the image did not arrive because the run stopped (interrupted,
// out of time, --fail-fast), not for a fault of its own.
func (r Result) Cut() bool { return r.cut }

// Report is a whole run.
type Report struct {
	// To is the registry and prefix, or the directory, copied to.
	To      string   `json:"to"`
	Catalog string   `json:"catalog,omitempty"`
	Images  []Result `json:"images"`
	// Catalogs are the catalogs copied, when more than one (Catalog is
	// the first).
	Catalogs []string `json:"catalogs,omitempty"`
	// Blocked are the images mirror.blockedImages left out, never copied.
	Blocked []Blocked `json:"blocked,omitempty"`
	// Earlier are images an earlier run wrote into the same directory that
	// this run did not copy (another catalog's): the report lists every
	// image of the directory, which --from-dir checks it against.
	Earlier []Result `json:"earlier,omitempty"`
	Failed  int      `json:"failed"`
	// Complete is true when every image the catalog needs arrived.
	Complete bool `json:"complete"`
	// Missing are the images that did not arrive (their Results say why).
	Missing []string `json:"missing,omitempty"`
	// Stopped says why the run stopped before its end (interrupted, out of
	// time), "" when it ran to its end.
	Stopped string `json:"stopped,omitempty"`
	// CatalogObjects says whether the CatalogSource and ClusterCatalog
	// were written (a mirror to a registry): "written", "incomplete"
	// (written with --allow-incomplete) or "not written".
	CatalogObjects string `json:"catalogObjects,omitempty"`
	// Files are the files written for the cluster (WriteManifests).
	Files   []string `json:"files,omitempty"`
	Bytes   int64    `json:"bytes"`
	Blobs   int      `json:"blobsCopied"`
	Seconds float64  `json:"seconds"`
	// RateLimitWaits counts the waits registries asked for (429 or 503
	// with Retry-After), which --retries does not count.
	RateLimitWaits int `json:"rateLimitWaits,omitempty"`
	// MaxNestedPaths is the run's --max-nested-paths: what maps a source
	// to its target, which prune recomputes from the catalogs.
	MaxNestedPaths int `json:"maxNestedPaths,omitempty"`
	// Started is when the run started (RFC 3339, UTC).
	Started string `json:"started,omitempty"`
	// Recorded is where this report was kept (Record): an artifact at
	// the registry, or a file beside the mirror directory's report.
	Recorded string `json:"recorded,omitempty"`
	// toDir: To is a directory.
	toDir bool
}

// Tally counts what arrived and what did not.
func (rep *Report) Tally() {
	rep.Failed, rep.Missing, rep.Bytes, rep.Blobs = 0, nil, 0, 0
	for _, r := range rep.Images {
		if r.Error != "" {
			rep.Failed++
			rep.Missing = append(rep.Missing, r.Source)
		}
		rep.Bytes += r.Bytes
		rep.Blobs += r.Blobs
	}
	rep.Complete = rep.Failed == 0 && rep.Stopped == ""
}

// Counters are a run's progress, updated as it goes, for a progress line.
type Counters struct {
	// Present counts the images found whole at the destination.
	Done, Failed, Present, Bytes atomic.Int64
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
	// Offline refuses every item not read from a mirror directory: a run
	// from a directory reads no registry.
	Offline bool
	// Counters, when set, are kept up to date while the run goes.
	Counters *Counters
	// Missing are images known not to arrive (what a mirror directory
	// lacks), added to the report as failures.
	Missing []Result
	// Blocked are the images left out (Block), listed in the report.
	Blocked []Blocked
	// MaxNestedPaths, when above 0, is the most path components a
	// repository at To may have (the registry host not counted, To's
	// prefix counted): see Target.
	MaxNestedPaths int
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
// With maxNested above 0, a repository path (PREFIX included, the registry
// host not) of more than maxNested components keeps its first maxNested-1
// components and joins the others with "-", as oc-mirror's
// --max-nested-paths does: with to mirror.example/olm and maxNested 2,
// quay.io/org/team/op becomes mirror.example/olm/org-team-op.
func Target(to, source string, maxNested int) (repo, tag, digest string, err error) {
	named, err := reference.ParseNormalizedNamed(source)
	if err != nil {
		return "", "", "", fmt.Errorf("image %q: %w", source, err)
	}
	host, prefix, _ := strings.Cut(strings.TrimSuffix(to, "/"), "/")
	path := reference.Path(named)
	if prefix != "" {
		path = prefix + "/" + path
	}
	repo = host + "/" + flatten(path, maxNested)
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

// flatten joins the components of path past the first n-1 with "-" when
// path has more than n (n 0: no limit).
func flatten(path string, n int) string {
	parts := strings.Split(path, "/")
	if n <= 0 || len(parts) <= n {
		return path
	}
	return strings.Join(append(parts[:n-1:n-1], strings.Join(parts[n-1:], "-")), "/")
}

// depthHint adds to a refusal of credentials at a deep destination
// repository what is likely the cause: registries that limit repository
// depth (Quay organisations, GitLab groups) answer 401 past it, with or
// without credentials.
func depthHint(err error, repo string, maxNested int) error {
	if repo == "" || !errors.Is(err, image.ErrUnauthorized) {
		return err
	}
	_, path, _ := strings.Cut(repo, "/")
	depth := len(strings.Split(path, "/"))
	if depth < 3 || (maxNested > 0 && depth <= maxNested) {
		return err
	}
	return fmt.Errorf("%w (the repository %s has %d path components: a registry that limits depth, as Quay organisations and GitLab groups do, refuses deeper ones with 401; --max-nested-paths 2 flattens them into org/a-b-c)", err, path, depth)
}

// CheckNested refuses a destination whose own prefix leaves no room under
// a limit of n path components: every image needs at least one component
// of its own below PREFIX, so PREFIX may have at most n-1.
func CheckNested(to string, n int) error {
	if n < 0 {
		return fmt.Errorf("--max-nested-paths %d: give 0 (no limit) or more", n)
	}
	_, prefix, _ := strings.Cut(strings.TrimSuffix(to, "/"), "/")
	if n == 0 || prefix == "" {
		return nil
	}
	if k := len(strings.Split(prefix, "/")); k >= n {
		return fmt.Errorf("--to %s: its prefix %s has %d path components, and --max-nested-paths %d leaves none for the images below it (a prefix may have at most %d): shorten the prefix or raise the limit", to, prefix, k, n, n-1)
	}
	return nil
}

// checkCollisions refuses a flattening that would put two source
// repositories in one target repository (a/b-c and a-b/c both become
// a-b-c), whose tags would overwrite each other.
func checkCollisions(items []Item, o Options) error {
	if o.MaxNestedPaths <= 0 || o.To == "" {
		return nil
	}
	owner := map[string]string{}
	for _, it := range items {
		named, err := reference.ParseNormalizedNamed(it.Source)
		if err != nil {
			continue // reported with the image
		}
		repo, _, _, err := Target(o.To, it.Source, o.MaxNestedPaths)
		if err != nil {
			continue
		}
		if prev, ok := owner[repo]; ok && prev != named.Name() {
			return fmt.Errorf("--max-nested-paths %d puts both %s and %s into %s: their tags would overwrite each other; raise the limit or mirror them apart", o.MaxNestedPaths, prev, named.Name(), repo)
		}
		owner[repo] = named.Name()
	}
	return nil
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
		// Before anything is copied.
		if err := CheckNested(o.To, o.MaxNestedPaths); err != nil {
			return nil, err
		}
		if err := checkCollisions(items, o); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	cp := cl.NewCopier()
	defer func() { _ = cp.Close() }() // unlocks a directory; its index.json is flushed below
	rep := &Report{To: o.To, Images: make([]Result, len(items)), MaxNestedPaths: o.MaxNestedPaths,
		Started: start.UTC().Format(time.RFC3339)}
	if o.ToDir != "" {
		rep.To, rep.toDir = o.ToDir, true
		// Locked, checked and cleaned of a killed run's partial files
		// before anything is copied.
		if err := cp.OpenLayout(o.ToDir); err != nil {
			return nil, err
		}
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
					r.cut = runCtx.Err() != nil
					st.Failed.Add(1)
					if o.FailFast {
						cancel()
					}
				} else if !r.Copied {
					st.Present.Add(1)
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
	if copiesDone != nil {
		copiesDone()
	}
	// index.json first, then the report: a report never names an entry
	// the directory lacks.
	flushErr := cp.Flush()

	for i := range rep.Images {
		r := &rep.Images[i]
		if r.Source == "" { // never started: fail-fast or cancelled
			*r = Result{Item: items[i], Error: NotStarted, cut: true}
		}
		if r.Role == RoleCatalog && r.Error == "" {
			if rep.Catalog == "" {
				rep.Catalog = r.Target
			}
			rep.Catalogs = append(rep.Catalogs, r.Target)
		}
	}
	if len(rep.Catalogs) < 2 {
		rep.Catalogs = nil
	}
	rep.Blocked = o.Blocked
	rep.Images = append(rep.Images, o.Missing...)
	if ctx.Err() != nil {
		rep.Stopped = context.Cause(ctx).Error()
	}
	rep.Tally()
	rep.Seconds = time.Since(start).Seconds()
	if flushErr != nil {
		return rep, fmt.Errorf("write %s: %w", o.ToDir, flushErr)
	}
	if o.ToDir != "" {
		rep.Earlier = earlier(o.ToDir, items)
		if err := atomicfile.Write(filepath.Join(o.ToDir, ReportFile), rep.WriteJSON); err != nil {
			return rep, err
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return rep, nil
}

// earlier are the images the report already in dir says arrived that
// items do not name.
func earlier(dir string, items []Item) []Result {
	raw, err := image.ReadRegular(filepath.Join(dir, ReportFile), 256<<20)
	if err != nil {
		return nil
	}
	var prev Report
	if json.Unmarshal(raw, &prev) != nil {
		return nil
	}
	now := map[string]bool{}
	for _, it := range items {
		now[layoutName(it.Source)] = true
	}
	var out []Result
	for _, r := range append(prev.Images, prev.Earlier...) {
		if r.Error == "" && r.Digest != "" && !now[layoutName(r.Source)] {
			now[layoutName(r.Source)] = true
			out = append(out, r)
		}
	}
	return out
}

// copiesDone, when set (by a test), is called once every image is copied,
// while the Copier still holds what the run kept of them.
var copiesDone func()

// NotStarted is the error of an image a stopped run never started.
const NotStarted = "not copied: the run stopped before this image"

func copyOne(ctx context.Context, cp *image.Copier, it Item, o Options, progress func(int64)) Result {
	r := Result{Item: it}
	fail := func(err error) Result {
		r.Error = err.Error()
		return r
	}
	var src image.Ref
	switch {
	case it.Dir != "":
		src = image.Ref{Transport: image.TransportOCI, Path: it.Dir, Tag: layoutName(it.Source)}
	case o.Offline:
		// A mirror directory's run never reaches for a registry.
		return fail(fmt.Errorf("%s is not in the mirror directory", it.Source))
	default:
		from := it.From
		if from == "" {
			from = it.Source
		}
		var err error
		if src, err = image.ParseReference(from); err != nil {
			return fail(err)
		}
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
		if repo, r.Tag, _, err = Target(o.To, it.Source, o.MaxNestedPaths); err != nil {
			return fail(err)
		}
		if dst, err = image.ParseReference(repo); err != nil {
			return fail(fmt.Errorf("target %s: %w", repo, err))
		}
		copyOpts.Tag = r.Tag
	}
	if it.Dir != "" {
		copyOpts.Referrers = false // the directory holds them as entries
	}
	res, err := cp.Copy(ctx, src, dst, copyOpts)
	r.Digest = res.Digest.String()
	r.Blobs, r.Present, r.Bytes, r.Referrers, r.Attached = res.BlobsCopied, res.BlobsPresent, res.Bytes, res.Referrers, res.Attached
	copied := res.ManifestsCopied > 0 || res.BlobsCopied > 0
	if err != nil {
		return fail(depthHint(err, repo, o.MaxNestedPaths))
	}
	if want := catalogimages.Digest(it.Source); want != "" && want != r.Digest && !it.Rebuilt {
		return fail(fmt.Errorf("%s arrived with digest %s", it.Source, r.Digest))
	}
	if it.Digest != "" && it.Digest != r.Digest {
		return fail(fmt.Errorf("%s arrived with digest %s, not %s as %s says", it.Source, r.Digest, it.Digest, ReportFile))
	}
	if o.Signatures {
		for _, a := range it.Attached {
			res, err := copyAttached(ctx, cp, it, a, dst, o.ToDir != "", copyOpts.Progress)
			r.Blobs, r.Present, r.Bytes = r.Blobs+res.BlobsCopied, r.Present+res.BlobsPresent, r.Bytes+res.Bytes
			if err != nil {
				return fail(fmt.Errorf("%s, attached to it: %w", a.Name, err))
			}
			copied = copied || res.ManifestsCopied > 0 || res.BlobsCopied > 0
			r.Referrers = append(r.Referrers, a.Name)
			if r.Attached == nil {
				r.Attached = map[string]string{}
			}
			r.Attached[a.Name] = a.Digest
		}
	}
	// Only an image that arrived whole counts as copied.
	r.Copied = copied
	if o.ToDir != "" {
		r.Target = "oci:" + o.ToDir + ":" + dst.Tag
	} else {
		r.Target = repo + "@" + r.Digest
	}
	return r
}

// copyAttached copies a mirror directory's entry attached to it's image to
// the image's repository at dst, tagged with its tag (a digest-named
// referrer gets no tag).
func copyAttached(ctx context.Context, cp *image.Copier, it Item, a Attachment, dst image.Ref, toDir bool, progress func(int64)) (image.CopyResult, error) {
	src := image.Ref{Transport: image.TransportOCI, Path: it.Dir, Tag: attachedName(it.Source, a.Name)}
	opts := image.CopyOptions{Progress: progress}
	if toDir {
		dst.Tag = src.Tag
	} else if catalogimages.Digest("x@"+a.Name) == "" {
		opts.Tag = a.Name
	}
	res, err := cp.Copy(ctx, src, dst, opts)
	if err == nil && res.Digest.String() != a.Digest {
		err = fmt.Errorf("arrived with digest %s, not %s", res.Digest, a.Digest)
	}
	return res, err
}

// attachedName names the entry of what is attached to the image source in
// a mirror directory, as the copy into it names it: the image's
// repository and the tag, or @ and the digest.
func attachedName(source, name string) string {
	repo := source
	if named, err := reference.ParseNormalizedNamed(source); err == nil {
		repo = named.Name()
	}
	if catalogimages.Digest("x@"+name) != "" {
		return repo + "@" + name
	}
	return repo + ":" + name
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

// FromDir lists what a mirror directory holds, as items to copy on: the
// images of the report the run that wrote it left beside them, each with
// what is attached to it and the bundles that use it. The directory is
// untrusted input: every entry of its index.json must be in the report
// with the same digest, and its files must be regular files (checked
// again as each is read). missing are the images the directory lacks.
func FromDir(dir string) (items []Item, missing []Result, err error) {
	entries, err := image.LayoutEntries(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("mirror directory %s: %w (was it written by opm alpha mirror --to-dir?)", dir, err)
	}
	reportPath := filepath.Join(dir, ReportFile)
	raw, err := image.ReadRegular(reportPath, 256<<20)
	if err != nil {
		return nil, nil, fmt.Errorf("mirror directory %s: %w (the report of the --to-dir run that wrote the directory, which every image is checked against; run opm alpha mirror --to-dir again on the connected side)", dir, err)
	}
	var prev Report
	if err := json.Unmarshal(raw, &prev); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", reportPath, err)
	}

	// What the report says the directory holds: each image that arrived,
	// and what is attached to it, by entry name.
	type want struct {
		digest string
		image  int // index in prev.Images
		attach string
	}
	prev.Images = append(prev.Images, prev.Earlier...)
	wants := map[string]want{}
	for i, r := range prev.Images {
		if r.Error != "" || r.Digest == "" {
			continue
		}
		wants[layoutName(r.Source)] = want{digest: r.Digest, image: i}
		for name, d := range r.Attached {
			wants[attachedName(r.Source, name)] = want{digest: d, image: i, attach: name}
		}
	}
	held := map[string]bool{}
	for _, e := range entries {
		name := e.Annotations[refName]
		if name == "" {
			continue // never read
		}
		w, ok := wants[name]
		if !ok {
			return nil, nil, fmt.Errorf("mirror directory %s: index.json names %s (%s), which %s does not list as copied: the directory was changed after the run that wrote it; nothing was copied from it", dir, name, e.Digest, ReportFile)
		}
		if e.Digest.String() != w.digest {
			what := "image"
			if prev.Images[w.image].Role == RoleCatalog && w.attach == "" {
				what = "catalog"
			}
			return nil, nil, fmt.Errorf("mirror directory %s: index.json names %s %s with digest %s, but %s says the run wrote %s: the directory was changed after it was written; nothing was copied from it", dir, what, name, e.Digest, ReportFile, w.digest)
		}
		held[name] = true
	}

	for _, r := range prev.Images {
		name := layoutName(r.Source)
		if r.Error != "" || !held[name] {
			why := "not in " + dir
			if r.Error != "" {
				why += " (the --to-dir run that wrote it could not copy it: " + r.Error + ")"
			} else {
				why += " (" + ReportFile + " says it arrived: was the directory cut short?)"
			}
			missing = append(missing, Result{Item: r.Item, Error: why + "; run opm alpha mirror --to-dir again on the connected side and carry the directory across"})
			continue
		}
		it := Item{Source: r.Source, Dir: dir, Digest: r.Digest, Role: r.Role, Uses: r.Uses, Rebuilt: r.Rebuilt}
		if it.Role != RoleCatalog && it.Role != RoleAdditional {
			it.Role = RoleImage
		}
		var gone []string
		for _, a := range sortedKeys(r.Attached) {
			if !held[attachedName(r.Source, a)] {
				gone = append(gone, a)
				continue
			}
			it.Attached = append(it.Attached, Attachment{Name: a, Digest: r.Attached[a]})
		}
		if len(gone) > 0 {
			missing = append(missing, Result{Item: r.Item, Error: fmt.Sprintf("not in %s whole: %s attached to it is missing; run opm alpha mirror --to-dir again on the connected side and carry the directory across", dir, strings.Join(gone, ", "))})
			continue
		}
		items = append(items, it)
	}
	if len(items) == 0 && len(missing) == 0 {
		return nil, nil, fmt.Errorf("mirror directory %s holds no images", dir)
	}
	// The catalog first, as a mirror to a registry copies it.
	sort.SliceStable(items, func(i, j int) bool { return items[i].Role == RoleCatalog && items[j].Role != RoleCatalog })
	return items, missing, nil
}

// BlockedIn are the images the report in the mirror directory dir says
// its run left out (mirror.blockedImages), for the run that copies the
// directory on to report them too.
func BlockedIn(dir string) []Blocked {
	raw, err := image.ReadRegular(filepath.Join(dir, ReportFile), 256<<20)
	if err != nil {
		return nil
	}
	var prev Report
	if json.Unmarshal(raw, &prev) != nil {
		return nil
	}
	return prev.Blocked
}
