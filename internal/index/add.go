package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/mattn/go-sqlite3"

	"github.com/opmkit/opm/internal/printable"
)

// AddOptions control Add.
type AddOptions struct {
	// Mode builds the channel graphs ("" is ModeReplaces).
	Mode Mode
	// Permissive skips the bundles that cannot be added, reporting each in
	// AddResult.Skipped, and adds the rest. A bundle found bad half-way
	// through its package is rolled back (savepoints) before the others are
	// retried without it.
	Permissive bool
	// OverwriteLatest replaces a bundle already in the index by the given
	// one of the same CSV name, when the old one is the head of every
	// channel it is in.
	OverwriteLatest bool

	// refused maps the CSV names of bundles of this call that could not be
	// read into an index (bad version, ...) to why: a bundle replacing one
	// of them is then told so, not that its predecessor was never given.
	refused map[string]string

	// hook, for fault-injection tests, runs after each bundle is written
	// ("bundle:<name>") and before commit ("commit"); an error aborts.
	hook func(stage string) error
}

// BundleRef names a bundle in results.
type BundleRef struct {
	Package string `json:"package"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
}

// Skipped is a bundle --permissive left out, and why.
type Skipped struct {
	Bundle BundleRef `json:"bundle"`
	Reason error     `json:"-"`
	// Message is Reason as text, for -o json.
	Message string `json:"reason"`
}

// ChannelHead is a channel and its head after an Add.
type ChannelHead struct {
	Name string `json:"name"`
	Head string `json:"head"`
}

// PackageResult is the state of a package an Add changed.
type PackageResult struct {
	Name           string        `json:"name"`
	DefaultChannel string        `json:"defaultChannel"`
	Channels       []ChannelHead `json:"channels"`
}

// AddResult says what an Add did.
type AddResult struct {
	Added       []BundleRef     `json:"added"`
	Overwritten []BundleRef     `json:"overwritten,omitempty"`
	Skipped     []Skipped       `json:"skipped,omitempty"`
	Packages    []PackageResult `json:"packages"`
	// Warnings are things done differently from what the bundles ask, such
	// as a default channel that does not exist replaced by another.
	Warnings []string `json:"warnings,omitempty"`
}

// Add adds bundles to the index in one transaction: all of them or, on any
// error, none (with Permissive: all but the skipped ones). The packages
// touched are rebuilt whole from their bundles, so the result does not depend
// on the order of bundles.
func (d *DB) Add(ctx context.Context, bundles []LoadedBundle, opts AddOptions) (*AddResult, error) {
	if d.readOnly {
		return nil, fmt.Errorf("add to index %s: opened read-only", d.path)
	}
	mode, err := ParseMode(string(opts.Mode))
	if err != nil {
		return nil, err
	}
	opts.Mode = mode
	res := &AddResult{}
	var errs []error

	// Parse every bundle; refuse duplicates within the call.
	var all []*rows
	opts.refused = map[string]string{}
	for _, lb := range bundles {
		r, e := bundleRows(lb)
		if e != nil {
			if e.Bundle != "" {
				opts.refused[e.Bundle] = e.Msg
			}
			if !opts.Permissive {
				errs = append(errs, e)
				continue
			}
			res.skip(BundleRef{Package: e.Package, Name: e.Bundle, Path: lb.BundlePath}, e)
			continue
		}
		all = append(all, r)
	}
	all, dupErrs := dedupeCall(all)
	for _, e := range dupErrs {
		if !opts.Permissive {
			errs = append(errs, e)
		} else {
			res.skip(BundleRef{Package: e.Package, Name: e.Bundle}, e)
		}
	}
	// With errors so far, the rest (other bundles of the same package too)
	// is still checked, so that every problem is reported at once; the
	// transaction is rolled back anyway.
	res, err = d.addRows(ctx, all, res, errs, opts)
	return res, d.corrupted(corruptErr(d.path, err))
}

// addRows adds parsed bundles; errs are the parse errors so far (strict mode),
// reported together with the package checks.
func (d *DB) addRows(ctx context.Context, all []*rows, res *AddResult, errs []error, opts AddOptions) (*AddResult, error) {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("add to index %s: begin: %w", d.path, err)
	}
	defer d.rollBack(tx)
	if changed, err := fixTriggers(ctx, tx); err != nil {
		return nil, fmt.Errorf("add to index %s: %w", d.path, err)
	} else if changed {
		res.Warnings = append(res.Warnings, "replaced the database's api cleanup triggers by opm's (upstream's dropped APIs still provided by other bundles; see docs/compatibility.md)")
	}
	w, err := newWriter(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("add to index %s: %w", d.path, err)
	}
	defer w.close()
	byPkg := map[string][]*rows{}
	for _, r := range all {
		byPkg[r.Package] = append(byPkg[r.Package], r)
	}
	pkgs := make([]string, 0, len(byPkg))
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	set, err := addHelpers(ctx, tx, all, opts)
	if err != nil {
		return nil, fmt.Errorf("add to index %s: %w", d.path, err)
	}
	if err := w.ensureHelperIndexes(ctx, set); err != nil {
		return nil, fmt.Errorf("add to index %s: %w", d.path, err)
	}

	for _, pkg := range pkgs {
		cand := byPkg[pkg]
		SortBundles(cand)
		// A package's bundles are whole in memory only while it is written.
		for _, r := range cand {
			if err := r.restore(); err != nil {
				return nil, fmt.Errorf("add to index %s: package %s: %w", d.path, pkg, err)
			}
		}
		if err := w.addPackageRetrying(ctx, pkg, cand, res, &errs, opts); err != nil {
			return nil, fmt.Errorf("add to index %s: package %s: %w", d.path, pkg, err)
		}
		for _, r := range cand {
			r.release()
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := w.finish(ctx); err != nil {
		return nil, fmt.Errorf("add to index %s: %w", d.path, err)
	}
	if opts.hook != nil {
		if err := opts.hook("commit"); err != nil {
			return nil, fmt.Errorf("add to index %s: %w", d.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("add to index %s: commit: %w", d.path, err)
	}
	return res, nil
}

// addPackageRetrying adds one package's bundles under a savepoint. Problems
// with the bundles go to errs; with Permissive, the blamed bundles are
// skipped (reported in res) and the package tried again without them.
func (w *writer) addPackageRetrying(ctx context.Context, pkg string, cand []*rows, res *AddResult, errs *[]error, opts AddOptions) error {
	for len(cand) > 0 {
		if _, err := w.tx.ExecContext(ctx, `SAVEPOINT opm_package`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		pr, perrs, err := w.addPackage(ctx, pkg, cand, opts)
		if err != nil {
			return err
		}
		if len(perrs) == 0 {
			if _, err := w.tx.ExecContext(ctx, `RELEASE opm_package`); err != nil {
				return fmt.Errorf("release savepoint: %w", err)
			}
			res.Added = append(res.Added, pr.added...)
			res.Overwritten = append(res.Overwritten, pr.overwritten...)
			res.Warnings = append(res.Warnings, pr.warnings...)
			res.Packages = append(res.Packages, pr.result)
			return nil
		}
		if err := rollbackSavepoint(ctx, w.tx, "opm_package"); err != nil {
			return fmt.Errorf("roll back: %w", err)
		}
		if !opts.Permissive {
			for _, e := range perrs {
				*errs = append(*errs, e)
			}
			return nil
		}
		// Drop the blamed bundles and try the package again.
		blamed := map[string]bool{}
		for _, e := range perrs {
			for _, b := range e.Blame {
				blamed[b] = true
			}
		}
		var keep []*rows
		for _, r := range cand {
			if !blamed[r.Name] {
				keep = append(keep, r)
				continue
			}
			var reasons []error
			for _, e := range perrs {
				for _, b := range e.Blame {
					if b == r.Name {
						reasons = append(reasons, e)
						break
					}
				}
			}
			res.skip(BundleRef{Package: pkg, Name: r.Name, Version: r.VersionStr, Path: r.Path}, errors.Join(reasons...))
		}
		if len(keep) == len(cand) {
			// Nothing to blame: the package cannot be added at all.
			for _, e := range perrs {
				*errs = append(*errs, e)
			}
			return nil
		}
		cand = keep
	}
	return nil
}

// addHelpers says which helper indexes an add needs: all of them when it
// may replace bundles already in the database (--overwrite-latest with a
// CSV name the database holds), since deleting a bundle cascades into every
// per-bundle table; none otherwise, as channels are rewritten in place (see
// rewriteChannels). It costs one primary-key lookup per bundle, so an add
// does no work that grows with the database.
func addHelpers(ctx context.Context, tx *sql.Tx, all []*rows, opts AddOptions) (helperSet, error) {
	if !opts.OverwriteLatest {
		return helpNone, nil
	}
	for _, r := range all {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM operatorbundle WHERE name = ?`, r.Name).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return helpNone, fmt.Errorf("look up bundle %s: %w", r.Name, err)
		}
		return helpAll, nil
	}
	return helpNone, nil
}

func (res *AddResult) skip(b BundleRef, reason error) {
	res.Skipped = append(res.Skipped, Skipped{Bundle: b, Reason: reason, Message: reason.Error()})
}

// dedupeCall refuses a CSV name or bundle path given twice in one call (upstream
// silently kept the first).
func dedupeCall(all []*rows) ([]*rows, []*Error) {
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Name != all[j].Name {
			return all[i].Name < all[j].Name
		}
		return all[i].Path < all[j].Path
	})
	var out []*rows
	var errs []*Error
	names := map[string]*rows{}
	paths := map[string]*rows{}
	for _, r := range all {
		if p, ok := names[r.Name]; ok {
			errs = append(errs, &Error{Kind: KindCSVExists, Package: r.Package, Bundle: r.Name,
				Msg:   fmt.Sprintf("given twice in this call (%s and %s)", p.Path, r.Path),
				Fix:   "give each bundle once; two bundles need two CSV names",
				Blame: []string{r.Name}})
			continue
		}
		if r.Path != "" {
			if p, ok := paths[r.Path]; ok {
				errs = append(errs, &Error{Kind: KindBundlePathExists, Package: r.Package, Bundle: r.Name,
					Msg:   fmt.Sprintf("bundle path %s is given twice in this call (also for %s)", r.Path, p.Name),
					Fix:   "give each bundle image once",
					Blame: []string{r.Name}})
				continue
			}
			paths[r.Path] = r
		}
		names[r.Name] = r
		out = append(out, r)
	}
	return out, errs
}

// existing is a bundle of the package already in the database.
type existing struct {
	node
	Path       string
	VersionStr string
}

type packageOutcome struct {
	added, overwritten []BundleRef
	warnings           []string
	result             PackageResult
}

// addPackage writes the new bundles of one package and rebuilds its channels.
// Problems with the bundles come back as *Error values (the caller rolls the
// savepoint back); database failures as err.
func (w *writer) addPackage(ctx context.Context, pkg string, news []*rows, opts AddOptions) (*packageOutcome, []*Error, error) {
	out := &packageOutcome{}
	allNames := func() []string {
		var s []string
		for _, r := range news {
			s = append(s, r.Name)
		}
		return s
	}
	// Most indexes deprecate nothing: test that first, since the join
	// reads every channel entry.
	var n int
	if err := w.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deprecated)`).Scan(&n); err != nil {
		return nil, nil, fmt.Errorf("read deprecated bundles: %w", err)
	}
	if n > 0 {
		if err := w.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM deprecated d JOIN channel_entry ce ON ce.operatorbundle_name = d.operatorbundle_name WHERE ce.package_name = ?`, pkg).Scan(&n); err != nil {
			return nil, nil, fmt.Errorf("read deprecated bundles: %w", err)
		}
	}
	if n > 0 {
		return nil, []*Error{{Kind: KindUnsupported, Package: pkg,
			Msg:   fmt.Sprintf("the package has %s (opm index deprecatetruncate); opm does not add to such packages yet", printable.Count(n, "deprecated bundle", "deprecated bundles")),
			Fix:   "add these bundles with upstream opm v1.73.0, or rebuild the package without deprecations",
			Blame: allNames()}}, nil
	}

	old, err := w.loadPackage(ctx, pkg)
	if err != nil {
		return nil, nil, err
	}
	olds, defaultChannel := old.bundles, old.defaultChannel
	oldByName := map[string]*existing{}
	for _, o := range olds {
		oldByName[o.Name] = o
	}
	heads := old.heads
	// operatorbundle has no index on bundlepath: one pass for all of them.
	pathHolders, err := w.bundlesAtPaths(ctx, news)
	if err != nil {
		return nil, nil, err
	}

	var perrs []*Error
	overwrite := map[string]*existing{}
	for _, r := range news {
		var otherPath sql.NullString
		err := w.tx.QueryRowContext(ctx, `SELECT bundlepath FROM operatorbundle WHERE name = ?`, r.Name).Scan(&otherPath)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, nil, fmt.Errorf("look up bundle %s: %w", r.Name, err)
		default:
			old := oldByName[r.Name]
			if old == nil {
				perrs = append(perrs, &Error{Kind: KindCSVExists, Package: pkg, Bundle: r.Name,
					Msg:   fmt.Sprintf("a bundle named %s (%s) is already in the index, outside this package's channels", r.Name, otherPath.String),
					Fix:   "give the new bundle its own CSV name (bump the version)",
					Blame: []string{r.Name}})
				continue
			}
			if !opts.OverwriteLatest {
				perrs = append(perrs, &Error{Kind: KindCSVExists, Package: pkg, Bundle: r.Name,
					Msg:   fmt.Sprintf("already in the index (from %s)", otherPath.String),
					Fix:   "bump the version and CSV name, or use --overwrite-latest to replace a channel head by a rebuilt bundle",
					Blame: []string{r.Name}})
				continue
			}
			var notHead []string
			for _, c := range old.Channels {
				if heads[c] != r.Name {
					notHead = append(notHead, fmt.Sprintf("channel %s (head %s)", c, heads[c]))
				}
			}
			if len(notHead) > 0 {
				perrs = append(perrs, &Error{Kind: KindOverwrite, Package: pkg, Bundle: r.Name,
					Msg:   "--overwrite-latest replaces only a bundle that heads every channel it is in; this one is below the head of " + strings.Join(notHead, ", "),
					Fix:   "release the change as a new version instead",
					Blame: []string{r.Name}})
				continue
			}
			overwrite[r.Name] = old
		}
		for _, other := range pathHolders[r.Path] {
			if overwrite[other] != nil && other == r.Name {
				continue
			}
			perrs = append(perrs, &Error{Kind: KindBundlePathExists, Package: pkg, Bundle: r.Name,
				Msg:   fmt.Sprintf("bundle path %s is already in the index (bundle %s)", r.Path, other),
				Fix:   "push the new bundle under its own tag or digest",
				Blame: []string{r.Name}})
			break
		}
	}
	if len(perrs) > 0 {
		return nil, perrs, nil
	}

	// The package's bundles after the add.
	var nodes []*node
	byName := map[string]*node{}
	for _, o := range olds {
		if overwrite[o.Name] != nil {
			continue
		}
		n := o.node
		nodes = append(nodes, &n)
		byName[n.Name] = &n
	}
	for _, r := range news {
		n := &node{Name: r.Name, Version: r.Version, Replaces: r.Replaces, Skips: r.Skips, Channels: r.Channels, New: true}
		nodes = append(nodes, n)
		byName[n.Name] = n
	}
	SortBundles(nodes)
	for i := 1; i < len(nodes); i++ {
		a, b := nodes[i-1], nodes[i]
		if a.Version.Compare(b.Version) != 0 || (!a.New && !b.New) {
			continue
		}
		var blame []string
		for _, x := range []*node{a, b} {
			if x.New {
				blame = append(blame, x.Name)
			}
		}
		perrs = append(perrs, &Error{Kind: KindVersionExists, Package: pkg, Bundle: b.Name,
			Msg:   fmt.Sprintf("version %s is also the version of %s", b.Version, a.Name),
			Fix:   "each bundle of a package needs its own version (or release); bump spec.version or set spec.release",
			Blame: blame})
	}
	if len(perrs) > 0 {
		return nil, perrs, nil
	}

	graph, gerrs := buildGraphRefused(pkg, nodes, opts.Mode, opts.refused)
	if len(gerrs) > 0 {
		return nil, gerrs, nil
	}
	def, warns := chooseDefault(pkg, nodes, news, graph, defaultChannel)
	out.warnings = warns

	// Write. A package whose bundles are replaced is cleared first (its
	// channels' heads are the bundles deleted); otherwise its channel rows
	// are rewritten in place, after the new bundles they point to.
	if len(overwrite) > 0 {
		if err := w.clearChannels(ctx, pkg); err != nil {
			return nil, nil, err
		}
		old.entries, old.channels = nil, nil
	}
	for name, old := range overwrite {
		if _, err := w.tx.ExecContext(ctx, `DELETE FROM operatorbundle WHERE name = ?`, name); err != nil {
			return nil, nil, fmt.Errorf("remove overwritten bundle %s: %w", name, err)
		}
		out.overwritten = append(out.overwritten, BundleRef{Package: pkg, Name: name, Version: old.VersionStr, Path: old.Path})
	}
	sort.Slice(out.overwritten, func(i, j int) bool { return out.overwritten[i].Name < out.overwritten[j].Name })
	for _, r := range news {
		err := w.insertBundle(ctx, r)
		if err == nil && opts.hook != nil {
			err = opts.hook("bundle:" + r.Name)
		}
		if err != nil {
			if isbundleFault(err) {
				// A row of this bundle was refused: the caller rolls the
				// package back and, with --permissive, goes on without it.
				return nil, []*Error{{Kind: KindInvalidBundle, Package: pkg, Bundle: r.Name, Msg: "writing the bundle failed", Err: err,
					Fix: "fix the bundle's content", Blame: []string{r.Name}}}, nil
			}
			return nil, nil, fmt.Errorf("bundle %s: %w", r.Name, err)
		}
		out.added = append(out.added, BundleRef{Package: pkg, Name: r.Name, Version: r.VersionStr, Path: r.Path})
	}
	if err := w.rewriteChannels(ctx, pkg, old, graph, def); err != nil {
		return nil, nil, err
	}
	out.result = PackageResult{Name: pkg, DefaultChannel: def}
	for _, g := range graph {
		out.result.Channels = append(out.result.Channels, ChannelHead{Name: g.Name, Head: g.Head})
	}
	return out, nil, nil
}

// chooseDefault picks the package's default channel: the one named by the
// highest bundle's annotations when that bundle is new, else the current one.
// A default that is not a channel of the package falls back, in order, to the
// only channel, the current default, and the highest bundle's first channel;
// each fallback is reported.
func chooseDefault(pkg string, nodes []*node, news []*rows, graph []chanGraph, current string) (string, []string) {
	channels := map[string]bool{}
	for _, g := range graph {
		channels[g.Name] = true
	}
	top := nodes[len(nodes)-1]
	var topRows *rows
	for _, r := range news {
		if r.Name == top.Name {
			topRows = r
		}
	}
	want, source := current, "the current default"
	if topRows != nil {
		want, source = topRows.Default, "the default channel annotation of "+top.Name+", the highest bundle,"
	}
	if want != "" && channels[want] {
		return want, nil
	}
	var fallback, why string
	switch {
	case len(graph) == 1:
		fallback, why = graph[0].Name, "the package's only channel"
	case current != "" && channels[current]:
		fallback, why = current, "the current default"
	default:
		fallback, why = top.Channels[0], "the first channel of "+top.Name+", the highest bundle"
	}
	if want == "" {
		if len(graph) == 1 {
			return fallback, nil // upstream does the same, silently
		}
		return fallback, []string{fmt.Sprintf("package %s: no default channel given by %s with %d channels; using %s (%s)", pkg, top.Name, len(graph), fallback, why)}
	}
	return fallback, []string{fmt.Sprintf("package %s: %s names channel %q, which no bundle of the package is in; using %s (%s)", pkg, source, want, fallback, why)}
}

// oldPackage is what the database holds of a package before an add.
type oldPackage struct {
	bundles        []*existing
	defaultChannel string
	exists         bool
	// entries are the ids of the package's channel_entry rows, ascending;
	// channels its channel names, heads their heads. Rewriting the package
	// reuses the rows.
	entries  []int64
	channels []string
	heads    map[string]string
}

// loadPackage reads the package's bundles, with their channels, from the
// database. channel_entry has no index on package_name, so it is read once.
func (w *writer) loadPackage(ctx context.Context, pkg string) (*oldPackage, error) {
	out := &oldPackage{exists: true}
	var def sql.NullString
	err := w.tx.QueryRowContext(ctx, `SELECT default_channel FROM package WHERE name = ?`, pkg).Scan(&def)
	if errors.Is(err, sql.ErrNoRows) {
		out.exists = false
	} else if err != nil {
		return nil, fmt.Errorf("read package %s: %w", pkg, err)
	}
	out.defaultChannel = def.String
	out.heads = map[string]string{}
	if err := queryEach(ctx, w.tx, `SELECT name, head_operatorbundle_name FROM channel WHERE package_name = ? ORDER BY name`, []any{pkg}, func(s scanner) error {
		var c string
		var h sql.NullString
		if err := s.Scan(&c, &h); err != nil {
			return err
		}
		out.channels = append(out.channels, c)
		out.heads[c] = h.String
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read channels of package %s: %w", pkg, err)
	}
	if !out.exists && len(out.channels) == 0 {
		// A package without a row has no channel entries either, unless an
		// old writer left some behind: channel is one row per channel, so
		// this spares reading every channel entry.
		return out, nil
	}
	channelsOf := map[string][]string{}
	var names []string
	err = queryEach(ctx, w.tx, `SELECT entry_id, channel_name, operatorbundle_name FROM channel_entry WHERE package_name = ? ORDER BY entry_id`, []any{pkg}, func(s scanner) error {
		var id int64
		var c, b sql.NullString
		if err := s.Scan(&id, &c, &b); err != nil {
			return err
		}
		out.entries = append(out.entries, id)
		if _, seen := channelsOf[b.String]; !seen {
			names = append(names, b.String)
		}
		channelsOf[b.String] = appendNew(channelsOf[b.String], c.String)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read channels of package %s: %w", pkg, err)
	}
	sort.Strings(names)
	for _, name := range names {
		var version, replaces, skips, path, release sql.NullString
		err := w.stmts["oldBundle"].QueryRowContext(ctx, name).Scan(&version, &replaces, &skips, &path, &release)
		if errors.Is(err, sql.ErrNoRows) {
			// Entries for skipped or replaced names that are not bundles
			// of the index.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read bundle %s of package %s: %w", name, pkg, err)
		}
		v, err := ParseVersion(version.String, release.String)
		if err != nil {
			// Old databases may hold a version opm would refuse: order it
			// as best we can rather than fail on someone else's bundle.
			sv, terr := semver.ParseTolerant(version.String)
			if terr != nil {
				sv = semver.Version{}
			}
			v = Version{Semver: sv}
		}
		e := &existing{node: node{Name: name, Version: v, Replaces: replaces.String}, Path: path.String, VersionStr: version.String}
		for _, s := range strings.Split(skips.String, ",") {
			if s = strings.TrimSpace(s); s != "" {
				e.Skips = append(e.Skips, s)
			}
		}
		e.Channels = channelsOf[name]
		sort.Strings(e.Channels)
		out.bundles = append(out.bundles, e)
	}
	return out, nil
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// bundlesAtPaths returns the bundles of the database at the image
// references of news. A directory is a place, not an identity: the same
// directory holding the next version (operator-sdk regenerates bundle/ for
// each release) is another bundle, so directories are not looked up.
func (w *writer) bundlesAtPaths(ctx context.Context, news []*rows) (map[string][]string, error) {
	var paths []string
	for _, r := range news {
		if r.Path != "" && !r.Local {
			paths = append(paths, r.Path)
		}
	}
	out := map[string][]string{}
	if len(paths) == 0 {
		return out, nil
	}
	list, err := json.Marshal(paths)
	if err != nil {
		return nil, err
	}
	err = queryEach(ctx, w.tx, `SELECT bundlepath, name FROM operatorbundle WHERE bundlepath IN (SELECT value FROM json_each(?)) ORDER BY name`, []any{string(list)}, func(s scanner) error {
		var p, n string
		if err := s.Scan(&p, &n); err != nil {
			return err
		}
		out[p] = append(out[p], n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up bundle paths: %w", err)
	}
	return out, nil
}

type scanner interface{ Scan(...any) error }

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryEach(ctx context.Context, q querier, query string, args []any, f func(scanner) error) error {
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := f(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

func rollbackSavepoint(ctx context.Context, tx *sql.Tx, name string) error {
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO `+name); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `RELEASE `+name)
	return err
}

// bundleFault marks an error as caused by one bundle's content rather than by
// the database (used by the fault-injection hook in tests).
type bundleFault struct{ Err error }

func (e *bundleFault) Error() string { return e.Err.Error() }
func (e *bundleFault) Unwrap() error { return e.Err }

// isbundleFault says whether a write error is the bundle's fault (a
// constraint its rows break) rather than the database's (I/O, disk full).
func isbundleFault(err error) bool {
	var bf *bundleFault
	if errors.As(err, &bf) {
		return true
	}
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}
