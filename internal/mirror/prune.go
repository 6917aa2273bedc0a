package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/image"
)

// Pruning deletes from a mirror registry the manifests that no kept
// report or catalog needs. What is needed is computed from the kept
// catalogs themselves (read at the destination, their images mapped as
// a mirror maps them), and from the kept reports (which add what a
// catalog does not name: additional images, signatures): a report that
// is stale or missing cannot make prune delete what a kept catalog
// needs. A manifest that an index kept anywhere at the destination lists
// is never deleted either. What may go is found in the repositories the
// registry lists (/v2/_catalog) and those the reports name: their tags,
// and the manifests earlier runs pushed by digest only (which no
// registry lists), as their reports name them.

// PruneOptions are what Prune reads and does.
type PruneOptions struct {
	// To is the mirror registry and prefix, REGISTRY[/PREFIX], as given
	// to the runs that filled it.
	To string
	// MaxNestedPaths is the --max-nested-paths of those runs: a kept
	// catalog's images are mapped to their targets as they were.
	MaxNestedPaths int
	// Keep are reports (files, or artifacts at the registry) and catalog
	// images as mirrored at the destination.
	Keep []string
	// Confirm deletes; without it Prune only lists.
	Confirm bool
	// Concurrency is how many requests go to the registry at once (at
	// least 1: one after another). What Prune finds and deletes, and the
	// error it stops at, do not depend on it.
	Concurrency int
	// Images lists the images the catalog image ref needs.
	Images func(ctx context.Context, ref string) ([]catalogimages.Image, error)
	// Warn tells the user something that does not stop the run.
	Warn func(string)
}

// Kept is one --keep, as Prune read it.
type Kept struct {
	Keep string `json:"keep"`
	// Kind is "report" or "catalog".
	Kind string `json:"kind"`
	// Catalogs are the catalogs (at the destination, by digest) whose
	// images were recomputed.
	Catalogs []string `json:"catalogs,omitempty"`
	// Images counts the images it needs.
	Images int `json:"images"`
}

// Unneeded is a manifest no kept report or catalog needs.
type Unneeded struct {
	Repository string   `json:"repository"`
	Digest     string   `json:"digest"`
	Tags       []string `json:"tags,omitempty"`
	MediaType  string   `json:"mediaType,omitempty"`
	// Reason says why it is unneeded, and what it was mirrored as.
	Reason string `json:"reason"`
	// Index is the index (repository@digest) it is a platform of, when
	// it goes with it.
	Index   string `json:"index,omitempty"`
	Deleted bool   `json:"deleted"`
	Error   string `json:"error,omitempty"`
}

// Ref is the manifest by digest.
func (u Unneeded) Ref() string { return u.Repository + "@" + u.Digest }

// PruneReport is what Prune found and did.
type PruneReport struct {
	To   string `json:"to"`
	Kept []Kept `json:"kept"`
	// Needed counts the manifests at the destination kept.
	Needed   int        `json:"needed"`
	Unneeded []Unneeded `json:"unneeded"`
	// DryRun: nothing was deleted (no --confirm).
	DryRun  bool `json:"dryRun"`
	Deleted int  `json:"deleted"`
	Failed  int  `json:"failed"`
	// Refused says why deleting stopped (a registry without the delete
	// API), "" when it did not.
	Refused string `json:"refused,omitempty"`
}

// ErrNothingDeleted marks an error after which nothing was deleted.
var ErrNothingDeleted = errors.New("nothing was deleted")

// known is a manifest a report names: what it was mirrored as.
type known struct {
	source, catalog, report string
	// subject is the digest of the image it is attached to (a signature,
	// an attestation, a referrer), "" for an image.
	subject string
}

// pruneState is the needed set and what is known of the destination.
type pruneState struct {
	o  PruneOptions
	cl *image.Client
	// host and prefix are --to's. Every repository is taken at host,
	// whatever name a report gave its registry: one registry reached
	// under two names is one, and only what is under prefix may go.
	host, prefix string
	// need: repository -> digest -> why; needTags: repository -> tag.
	need     map[string]map[string]string
	needTags map[string]map[string]bool
	// listed: digest -> an index kept that lists it (any repository).
	listed map[string]string
	// seen: repository -> digest -> what a report says it was.
	seen  map[string]map[string]known
	repos map[string]bool
	// catalogs to recompute: target ref -> (to, maxNested).
	catalogs []catalogToOpen
	// nestings are the --max-nested-paths of the reports of runs to --to.
	nestings map[int]bool
	// derived: a kept catalog -> the images it names by digest, at the
	// mirror; missing: those the mirror does not hold.
	derived map[string]map[string][]string
	missing map[string]bool
}

type catalogToOpen struct {
	ref, to string
	nested  int
}

// Prune lists (and with Confirm deletes) the manifests at o.To that no
// kept report or catalog needs. An error before any deletion wraps
// ErrNothingDeleted; the report then lists nothing as deleted.
func Prune(ctx context.Context, cl *image.Client, o PruneOptions) (*PruneReport, error) {
	if len(o.Keep) == 0 {
		return nil, fmt.Errorf("give --keep: the reports or catalog images whose images stay: %w", ErrNothingDeleted)
	}
	host, prefix, _ := strings.Cut(strings.TrimSuffix(o.To, "/"), "/")
	if host == "" {
		return nil, fmt.Errorf("--to %q is not REGISTRY[/PREFIX]: %w", o.To, ErrNothingDeleted)
	}
	st := &pruneState{o: o, cl: cl, host: host, prefix: prefix, need: map[string]map[string]string{}, needTags: map[string]map[string]bool{},
		listed: map[string]string{}, seen: map[string]map[string]known{}, repos: map[string]bool{},
		nestings: map[int]bool{}, derived: map[string]map[string][]string{}, missing: map[string]bool{}}
	rep := &PruneReport{To: o.To, DryRun: !o.Confirm}
	if prefix == "" {
		st.warn(fmt.Sprintf("--to %s names no prefix: every repository of the registry is looked at, and what other tools pushed there is listed too (mirror under a prefix of its own)", o.To))
	}
	fail := func(err error) (*PruneReport, error) {
		return rep, fmt.Errorf("%w; %w", err, ErrNothingDeleted)
	}
	for _, k := range o.Keep {
		kept, err := st.keep(ctx, k)
		if err != nil {
			return fail(err)
		}
		rep.Kept = append(rep.Kept, kept)
	}
	// The history first: the --max-nested-paths its runs had are applied
	// to the kept catalogs too.
	reportsRepo := ReportsRepository(o.To, o.MaxNestedPaths)
	if err := st.readHistory(ctx, reportsRepo); err != nil {
		return fail(err)
	}
	for i := range st.catalogs {
		c := st.catalogs[i]
		n, err := st.recompute(ctx, c)
		if err != nil {
			return fail(err)
		}
		for j := range rep.Kept {
			for _, kc := range rep.Kept[j].Catalogs {
				if kc == c.ref {
					rep.Kept[j].Images = max(rep.Kept[j].Images, n)
				}
			}
		}
	}
	if err := st.resolveTags(ctx); err != nil {
		return fail(err)
	}
	if err := st.expandIndexes(ctx); err != nil {
		return fail(err)
	}
	if err := st.checkFound(); err != nil {
		return fail(err)
	}
	if err := st.listRepos(ctx, host, prefix); err != nil {
		return fail(err)
	}
	delete(st.repos, reportsRepo) // the history stays
	unneeded, err := st.unneeded(ctx)
	if err != nil {
		return fail(err)
	}
	rep.Unneeded = unneeded
	for _, ds := range st.need {
		rep.Needed += len(ds)
	}
	if !o.Confirm {
		return rep, nil
	}
	return rep, st.deleteAll(ctx, rep)
}

// keep reads one --keep: a report (a file, or an artifact at the
// registry) or a catalog image at the destination.
func (st *pruneState) keep(ctx context.Context, k string) (Kept, error) {
	if !image.LooksLikeReference(k) || isFile(k) {
		r, err := ReadReport(ctx, st.cl, k)
		if err != nil {
			return Kept{}, fmt.Errorf("--keep %s: %w", k, err)
		}
		return st.keepReport(k, r), nil
	}
	r, err := readRemoteReport(ctx, st.cl, k)
	var notReport *errNotReport
	switch {
	case err == nil:
		return st.keepReport(k, r), nil
	case !errors.As(err, &notReport):
		return Kept{}, fmt.Errorf("--keep %s: %w", k, err)
	}
	repo, tag, _ := splitRef(k)
	if h, _, _ := strings.Cut(repo, "/"); h != st.host {
		return Kept{}, fmt.Errorf("--keep %s: a catalog kept is named as mirrored at --to %s (registry %s), not at %s", k, st.o.To, st.host, h)
	}
	d, _, err := st.cl.ManifestDigest(ctx, k)
	if err != nil {
		return Kept{}, fmt.Errorf("--keep %s: %w", k, err)
	}
	st.needDigest(repo, d, "the kept catalog "+k)
	if tag != "" {
		st.needTag(repo, tag)
	}
	ref := repo + "@" + d
	st.catalogs = append(st.catalogs, catalogToOpen{ref: ref, to: st.o.To, nested: st.o.MaxNestedPaths})
	return Kept{Keep: k, Kind: "catalog", Catalogs: []string{ref}}, nil
}

func (st *pruneState) keepReport(k string, r *Report) Kept {
	kept := Kept{Keep: k, Kind: "report"}
	defer func() {
		if kept.Images == 0 {
			st.warn(fmt.Sprintf("--keep %s names no image at a registry (a run to a directory? keep the report of the run that copied it on with --from-dir)", k))
		}
	}()
	for _, im := range r.Images {
		if im.Error != "" || im.Target == "" {
			continue
		}
		repo, d, ok := registryTarget(im.Target)
		if !ok {
			continue // a directory's entry: nothing at a registry
		}
		kept.Images++
		why := fmt.Sprintf("%s, in the kept report %s", im.Source, k)
		st.needDigest(repo, d, why)
		if im.Tag != "" {
			st.needTag(repo, im.Tag)
		}
		for name, ad := range im.Attached {
			st.needDigest(repo, ad, why)
			if catalogimages.Digest("x@"+name) == "" {
				st.needTag(repo, name)
			}
		}
		for _, name := range im.Referrers {
			if catalogimages.Digest("x@"+name) == "" {
				st.needTag(repo, name)
			}
		}
		if im.Role == RoleCatalog {
			ref := st.at(repo) + "@" + d
			kept.Catalogs = append(kept.Catalogs, ref)
			st.catalogs = append(st.catalogs, catalogToOpen{ref: ref, to: r.To, nested: r.MaxNestedPaths})
		}
	}
	return kept
}

// recompute adds the images the catalog c needs, read from the catalog
// at the destination and mapped as the mirror maps them.
func (st *pruneState) recompute(ctx context.Context, c catalogToOpen) (int, error) {
	images, err := st.o.Images(ctx, c.ref)
	if err != nil {
		return 0, fmt.Errorf("read the kept catalog %s (its images are what prune keeps): %w", c.ref, err)
	}
	// Mapped as the flag says and as every earlier run to the same
	// prefix did: a wrong or changed --max-nested-paths keeps more, never
	// less.
	nestings := map[int]bool{c.nested: true}
	if samePrefix(c.to, st.o.To) {
		for k := range st.nestings {
			nestings[k] = true
		}
	}
	n := 0
	for _, im := range images {
		for _, src := range append([]string{im.Image}, im.Also...) {
			n++
			for nested := range nestings {
				repo, tag, d, err := Target(c.to, src, nested)
				if err != nil {
					return 0, fmt.Errorf("the kept catalog %s names %w", c.ref, err)
				}
				if d != "" {
					st.needDigest(repo, d, fmt.Sprintf("%s, named by the kept catalog %s", src, c.ref))
					if st.derived[c.ref] == nil {
						st.derived[c.ref] = map[string][]string{}
					}
					st.derived[c.ref][src] = append(st.derived[c.ref][src], st.at(repo)+"@"+d)
				}
				if tag != "" {
					st.needTag(repo, tag)
				}
			}
		}
	}
	return n, nil
}

// at is repo (host/path) at --to's registry.
func (st *pruneState) at(repo string) string {
	_, path, _ := strings.Cut(repo, "/")
	return st.host + "/" + path
}

// under: repo is under --to's prefix, where prune may delete.
func (st *pruneState) under(repo string) bool {
	h, path, _ := strings.Cut(repo, "/")
	return h == st.host && (st.prefix == "" || strings.HasPrefix(path, st.prefix+"/"))
}

func (st *pruneState) needDigest(repo, d, why string) {
	repo = st.at(repo)
	if st.need[repo] == nil {
		st.need[repo] = map[string]string{}
	}
	if _, ok := st.need[repo][d]; !ok {
		st.need[repo][d] = why
	}
}

func (st *pruneState) needTag(repo, tag string) {
	repo = st.at(repo)
	if st.needTags[repo] == nil {
		st.needTags[repo] = map[string]bool{}
	}
	st.needTags[repo][tag] = true
}

// resolveTags adds the manifests the needed tags name now.
func (st *pruneState) resolveTags(ctx context.Context) error {
	type tagged struct{ repo, tag, digest string }
	var all []tagged
	for _, repo := range sortedSet(st.needTags) {
		for _, tag := range sortedBools(st.needTags[repo]) {
			all = append(all, tagged{repo: repo, tag: tag})
		}
	}
	if _, err := parallel(ctx, len(all), st.o.Concurrency, func(i int) error {
		d, _, err := st.cl.ManifestDigest(ctx, all[i].repo+":"+all[i].tag)
		if errors.Is(err, image.ErrNotFound) || errors.Is(err, image.ErrUnauthorized) || errors.Is(err, image.ErrDenied) {
			return nil // never arrived, or a repository the registry refuses (as expandIndexes)
		}
		all[i].digest = d
		return err
	}); err != nil {
		return err
	}
	for _, t := range all {
		if t.digest != "" {
			st.needDigest(t.repo, t.digest, t.repo+":"+t.tag+", a tag a kept catalog or report names")
		}
	}
	return nil
}

// expandIndexes adds the manifests every needed index lists, in its
// repository, and notes them as listed by an index (for every
// repository). The indexes are read a level at a time, those of a level
// at once, and what they list is taken in the order a queue of them
// would take it.
func (st *pruneState) expandIndexes(ctx context.Context) error {
	level := []string{}
	for repo, ds := range st.need {
		for d := range ds {
			level = append(level, repo+"@"+d)
		}
	}
	sort.Strings(level)
	for len(level) > 0 {
		type listing struct {
			children []string
			// absent: not at the registry; refused: in a repository
			// the registry refuses.
			absent, refused bool
		}
		got := make([]listing, len(level))
		if _, err := parallel(ctx, len(level), st.o.Concurrency, func(i int) error {
			children, found, err := st.indexChildren(ctx, level[i])
			if errors.Is(err, image.ErrUnauthorized) || errors.Is(err, image.ErrDenied) {
				got[i].refused = true
				return nil
			}
			got[i] = listing{children: children, absent: !found}
			return err
		}); err != nil {
			return err
		}
		var next []string
		for i, ref := range level {
			if got[i].refused || got[i].absent {
				// Not there, or refused where a registry that limits
				// depth refuses a repository (a mapping the mirror did
				// not use): nothing there. What is there is read
				// again, and refused, before anything goes.
				st.missing[ref] = true
				continue
			}
			repo, _, _ := splitRef(ref)
			for _, c := range got[i].children {
				if _, ok := st.listed[c]; !ok {
					st.listed[c] = ref
				}
				if _, ok := st.need[repo][c]; !ok {
					st.needDigest(repo, c, "listed by the index "+ref)
					next = append(next, repo+"@"+c)
				}
			}
		}
		level = next
	}
	return nil
}

// indexChildren lists the manifests the index ref lists (none for an
// image); found is false for a manifest not at the registry. It only
// reads: it runs beside others.
func (st *pruneState) indexChildren(ctx context.Context, ref string) (children []string, found bool, err error) {
	raw, mt, _, err := st.cl.Manifest(ctx, ref)
	if errors.Is(err, image.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return childrenOf(raw, mt), true, nil
}

func childrenOf(raw []byte, mt string) []string {
	var m struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if mt == "" {
		mt = m.MediaType
	}
	if !strings.Contains(mt, "index") && !strings.Contains(mt, "manifest.list") {
		return nil
	}
	var out []string
	for _, c := range m.Manifests {
		out = append(out, c.Digest)
	}
	return out
}

// checkFound refuses a kept catalog none of whose images is where the
// mapping puts them: the mirror ran with another --to or
// --max-nested-paths, and what it holds would all look unneeded.
func (st *pruneState) checkFound() error {
	for _, c := range sortedKeysOf(st.derived) {
		found, example := 0, ""
		for _, src := range sortedKeysOf(st.derived[c]) {
			at := false
			for _, r := range st.derived[c][src] {
				at = at || !st.missing[r]
				if example == "" {
					example = r
				}
			}
			if at {
				found++
			}
		}
		if found == 0 {
			return fmt.Errorf("none of the images the kept catalog %s names by digest is at the mirror where --to %s and --max-nested-paths %d put them (%s, for one): give prune the --to and --max-nested-paths of the mirror runs", c, st.o.To, st.o.MaxNestedPaths, example)
		}
		if n := len(st.derived[c]); found < n {
			st.warn(fmt.Sprintf("%d of the %d images the kept catalog %s names by digest are not at the mirror (an incomplete mirror?)", n-found, n, c))
		}
	}
	return nil
}

// samePrefix: the destinations a and b (REGISTRY[/PREFIX]) have the same
// prefix.
func samePrefix(a, b string) bool {
	_, pa, _ := strings.Cut(strings.TrimSuffix(a, "/"), "/")
	_, pb, _ := strings.Cut(strings.TrimSuffix(b, "/"), "/")
	return pa == pb
}

// readHistory reads every report kept in repo, for the manifests pushed
// by digest only that they name. A report that cannot be read is
// skipped with a warning; only a cancelled run stops it. The reports are
// read a few times Concurrency at a time, to hold no more of them at
// once, and remembered in the order of their tags.
func (st *pruneState) readHistory(ctx context.Context, repo string) error {
	tags, err := st.cl.Tags(ctx, repo)
	if err != nil {
		st.warn(fmt.Sprintf("cannot read the reports kept in %s (%v): manifests earlier runs pushed by digest only are not found", repo, err))
		return nil
	}
	chunk := 4 * max(1, st.o.Concurrency)
	for start := 0; start < len(tags); start += chunk {
		part := tags[start:min(start+chunk, len(tags))]
		reports := make([]*Report, len(part))
		errs := make([]error, len(part))
		if _, err := parallel(ctx, len(part), st.o.Concurrency, func(i int) error {
			reports[i], errs[i] = readRemoteReport(ctx, st.cl, repo+":"+part[i])
			return nil
		}); err != nil {
			return fmt.Errorf("read the reports kept in %s: %w", repo, err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("read the reports kept in %s: %w", repo, err)
		}
		for i, tag := range part {
			ref := repo + ":" + tag
			if errs[i] != nil {
				st.warn(fmt.Sprintf("skipped %s: %v", ref, errs[i]))
				continue
			}
			st.remember(ref, reports[i])
		}
	}
	return nil
}

// remember notes what the report r names, for the listing.
func (st *pruneState) remember(where string, r *Report) {
	if samePrefix(r.To, st.o.To) {
		st.nestings[r.MaxNestedPaths] = true
	}
	catalog := reportCatalog(r)
	for _, im := range r.Images {
		if im.Error != "" || im.Target == "" {
			continue
		}
		repo, d, ok := registryTarget(im.Target)
		if !ok {
			continue
		}
		st.note(repo, d, known{source: im.Source, catalog: catalog, report: where})
		for _, ad := range im.Attached {
			st.note(repo, ad, known{source: "attached to " + im.Source, catalog: catalog, report: where, subject: d})
		}
	}
}

func (st *pruneState) note(repo, d string, k known) {
	repo = st.at(repo)
	st.repos[repo] = true
	if st.seen[repo] == nil {
		st.seen[repo] = map[string]known{}
	}
	st.seen[repo][d] = k
}

// listRepos adds the registry's repositories under the prefix.
func (st *pruneState) listRepos(ctx context.Context, host, prefix string) error {
	repos, err := st.cl.Repositories(ctx, host)
	if errors.Is(err, image.ErrCatalogUnsupported) {
		st.warn(fmt.Sprintf("%v: only the repositories the reports and kept catalogs name are looked at", err))
		for repo := range st.need {
			st.repos[repo] = true
		}
		for repo := range st.needTags {
			st.repos[repo] = true
		}
		return nil
	}
	if err != nil {
		return err
	}
	for _, r := range repos {
		if prefix == "" || strings.HasPrefix(r, prefix+"/") {
			st.repos[host+"/"+r] = true
		}
	}
	return nil
}

// sigTag is a tag naming what is attached to a manifest by its digest
// (cosign's sha256-HEX.sig, .att, .sbom; the referrers tag sha256-HEX).
var sigTag = regexp.MustCompile(`^sha256-([0-9a-f]{64})(?:\..+)?$`)

// repoScan is what unneeded found in one repository.
type repoScan struct {
	tags []string
	// digests: the digest each tag names ("" once untagged).
	digests, mediaTypes []string
	// byDigest: the tags of each manifest found (none for one pushed by
	// digest only).
	byDigest  map[string][]string
	mediaType map[string]string
	// top are the unneeded manifests that are not platforms of another.
	top []string
	// children: what each of top lists.
	children [][]string
}

// unneeded lists the manifests of the repositories that nothing kept
// needs, each once, with the platforms of an unneeded index that nothing
// else needs. The registry is read a step at a time for every repository
// at once (tags, their manifests, the manifests pushed by digest only,
// what the unneeded indexes list), Concurrency requests at a time; what
// is found does not depend on the order the answers come in, and the
// error returned is the one a loop over the repositories in order, each
// step after step, meets first: a repository where a step failed, and
// those after it, are not read further.
func (st *pruneState) unneeded(ctx context.Context) ([]Unneeded, error) {
	var repos []string
	for _, repo := range sortedKeysOf(st.repos) {
		if st.under(repo) {
			repos = append(repos, repo)
		}
	}
	scans := make([]repoScan, len(repos))
	// cut is the first repository where a step failed, with cutErr.
	cut, cutErr := parallel(ctx, len(repos), st.o.Concurrency, func(i int) error {
		tags, err := st.cl.Tags(ctx, repos[i])
		scans[i].tags = tags
		scans[i].digests = make([]string, len(tags))
		scans[i].mediaTypes = make([]string, len(tags))
		return err
	})
	// each calls read(r, i) for i below count(r), for the repositories
	// r before cut, all at once; a failure moves cut to its repository.
	each := func(count func(r int) int, read func(r, i int) error) {
		type item struct{ r, i int }
		var items []item
		for r := range cut {
			for i := range count(r) {
				items = append(items, item{r, i})
			}
		}
		if k, err := parallel(ctx, len(items), st.o.Concurrency, func(j int) error { return read(items[j].r, items[j].i) }); err != nil {
			cut, cutErr = items[k].r, err
		}
	}

	// The manifest of every tag.
	each(func(r int) int { return len(scans[r].tags) }, func(r, i int) error {
		sc := &scans[r]
		d, mt, err := st.cl.ManifestDigest(ctx, repos[r]+":"+sc.tags[i])
		if errors.Is(err, image.ErrNotFound) {
			return nil // untagged meanwhile
		}
		sc.digests[i], sc.mediaTypes[i] = d, mt
		return err
	})
	seen := make([][]string, len(repos))
	for r := range cut {
		repo, sc := repos[r], &scans[r]
		sc.byDigest, sc.mediaType = map[string][]string{}, map[string]string{}
		for i, tag := range sc.tags {
			d := sc.digests[i]
			if d == "" {
				continue
			}
			if m := sigTag.FindStringSubmatch(tag); m != nil {
				if _, ok := st.need[repo]["sha256:"+m[1]]; ok {
					st.needDigest(repo, d, repo+":"+tag+", attached to a kept image")
				}
			}
			sc.byDigest[d] = append(sc.byDigest[d], tag)
			sc.mediaType[d] = sc.mediaTypes[i]
		}
		for _, d := range sortedKeysOf(st.seen[repo]) {
			if k := st.seen[repo][d]; k.subject != "" && st.needed(repo, k.subject) {
				// Attached to a kept image (a referrer pushed by digest
				// only, which a catalog does not name): it stays.
				st.needDigest(repo, d, "attached to the kept "+repo+"@"+k.subject)
			}
		}
		for _, d := range sortedKeysOf(st.seen[repo]) {
			if _, ok := sc.byDigest[d]; !ok && !st.needed(repo, d) {
				seen[r] = append(seen[r], d)
			}
		}
	}

	// The manifests earlier runs pushed by digest only, that are still
	// there.
	type present struct {
		there     bool
		mediaType string
	}
	found := make([][]present, len(repos))
	for r := range cut {
		found[r] = make([]present, len(seen[r]))
	}
	each(func(r int) int { return len(seen[r]) }, func(r, i int) error {
		_, mt, err := st.cl.ManifestDigest(ctx, repos[r]+"@"+seen[r][i])
		if errors.Is(err, image.ErrNotFound) {
			return nil // gone already
		}
		found[r][i] = present{err == nil, mt}
		return err
	})
	for r := range cut {
		repo, sc := repos[r], &scans[r]
		for i, d := range seen[r] {
			if found[r][i].there {
				sc.byDigest[d] = nil
				sc.mediaType[d] = found[r][i].mediaType
			}
		}
		for _, d := range sortedKeysOf(sc.byDigest) {
			if !st.needed(repo, d) {
				sc.top = append(sc.top, d)
			}
		}
		sc.children = make([][]string, len(sc.top))
	}

	// What the unneeded indexes list: their platforms go with them.
	each(func(r int) int { return len(scans[r].top) }, func(r, i int) error {
		children, _, err := st.indexChildren(ctx, repos[r]+"@"+scans[r].top[i])
		scans[r].children[i] = children
		return err
	})
	if cutErr != nil {
		return nil, cutErr
	}
	var out []Unneeded
	for r, repo := range repos {
		sc := &scans[r]
		for i, d := range sc.top {
			u := Unneeded{Repository: repo, Digest: d, Tags: sc.byDigest[d], MediaType: sc.mediaType[d], Reason: st.why(repo, d)}
			out = append(out, u)
			for _, c := range sc.children[i] {
				if st.needed(repo, c) {
					continue
				}
				if _, ok := sc.byDigest[c]; ok {
					continue // listed on its own
				}
				sc.byDigest[c] = nil
				out = append(out, Unneeded{Repository: repo, Digest: c, Index: u.Ref(),
					Reason: "needed by no kept report or catalog; a platform of " + u.Ref() + ", which goes with it"})
			}
		}
	}
	return out, nil
}

// needed: a kept report or catalog needs repo@d, or a kept index lists
// d.
func (st *pruneState) needed(repo, d string) bool {
	if _, ok := st.need[repo][d]; ok {
		return true
	}
	_, ok := st.listed[d]
	return ok
}

func (st *pruneState) why(repo, d string) string {
	why := "needed by no kept report or catalog"
	if k, ok := st.seen[repo][d]; ok {
		why += "; mirrored as " + k.source
		if k.catalog != "" {
			why += " for " + k.catalog
		}
		why += " (report " + k.report + ")"
	}
	return why
}

// deleteAll deletes the unneeded manifests, indexes before what they
// list: the first alone, so that a registry that refuses deletion says
// so before anything else is sent; then the other manifests that are
// not platforms, Concurrency at a time; then the platforms. A registry
// that refuses deletion stops it at once (what was already sent
// finishes, and is reported as it went).
func (st *pruneState) deleteAll(ctx context.Context, rep *PruneReport) error {
	var top, platforms []int
	for i, u := range rep.Unneeded {
		if u.Index == "" {
			top = append(top, i)
		} else {
			platforms = append(platforms, i)
		}
	}
	order := slices.Concat(top, platforms)
	first := min(1, len(order))
	split := max(len(top), first)
	for _, group := range [][]int{order[:first], order[first:split], order[split:]} {
		errs := make([]error, len(group))
		sent := make([]bool, len(group))
		_, stop := parallel(ctx, len(group), st.o.Concurrency, func(j int) error {
			sent[j] = true
			errs[j] = st.cl.DeleteManifest(ctx, rep.Unneeded[group[j]].Ref())
			if errors.Is(errs[j], image.ErrDeleteUnsupported) {
				return errs[j]
			}
			return nil
		})
		var refused error
		for j, i := range group {
			u, err := &rep.Unneeded[i], errs[j]
			switch {
			case !sent[j]:
			case err == nil, errors.Is(err, image.ErrNotFound):
				u.Deleted = true
				rep.Deleted++
			case errors.Is(err, image.ErrDeleteUnsupported):
				if refused == nil {
					refused = err
				}
			default:
				u.Error = err.Error()
				rep.Failed++
			}
		}
		if refused != nil {
			rep.Refused = refused.Error()
			host, _, _ := strings.Cut(st.o.To, "/")
			msg := fmt.Errorf("registry %s does not allow deleting manifests (%v): enable it (docker-registry: storage.delete.enabled: true in its config.yml, or REGISTRY_STORAGE_DELETE_ENABLED=true; a proxy in front must pass DELETE requests on)", host, refused)
			if rep.Deleted == 0 {
				return fmt.Errorf("%w; %w", msg, ErrNothingDeleted)
			}
			return fmt.Errorf("%w; %d of %d manifests were deleted before it refused", msg, rep.Deleted, len(rep.Unneeded))
		}
		if stop != nil {
			return fmt.Errorf("stopped after deleting %d of %d manifests: %w", rep.Deleted, len(rep.Unneeded), stop)
		}
	}
	if rep.Failed > 0 {
		return fmt.Errorf("%d of %d manifests could not be deleted", rep.Failed, len(rep.Unneeded))
	}
	return nil
}

func (st *pruneState) warn(msg string) {
	if st.o.Warn != nil {
		st.o.Warn(msg)
	}
}

// registryTarget is a report's target at a registry (host/path@digest)
// as its repository and digest; ok is false for anything else (a mirror
// directory's oci:DIR:NAME).
func registryTarget(target string) (repo, digest string, ok bool) {
	ref, err := image.ParseReference(target)
	if err != nil || ref.Transport != image.TransportRegistry || strings.Contains(target, "://") {
		return "", "", false
	}
	repo, _, digest = splitRef(target)
	return repo, digest, digest != ""
}

// splitRef splits host/path[:tag][@digest].
func splitRef(ref string) (repo, tag, digest string) {
	repo = ref
	if i := strings.Index(repo, "@"); i >= 0 {
		repo, digest = repo[:i], repo[i+1:]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag, digest
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedSet(m map[string]map[string]bool) []string { return sortedKeysOf(m) }

func sortedBools(m map[string]bool) []string { return sortedKeysOf(m) }
