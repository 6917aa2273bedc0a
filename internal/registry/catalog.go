package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/registry/api"
)

// Catalog is a Backend over a database made from a file-based catalog that
// answers as upstream's opm serve answers the catalog itself, where its
// answers differ from upstream's sqlite server's: channels are the
// catalog's (a bundle that an entry replaces or skips in another channel
// is no entry; each entry has its own skipRange), bundles are answered
// whole wherever one is (GetBundleForChannel too), with the catalog's
// requirements as required APIs and no plurals, GetBundle and the other
// single-bundle answers leave replaces and skips out, ListBundles leaves
// out the manifests of bundles that have an image, the queries by API
// look at channel heads (latest) or every entry as upstream's do, and
// not-found answers are upstream's opm serve's words.
//
// The channel graph is read once, at open, into memory; bundles are read
// from the database when answered.
type Catalog struct {
	*SQLite
	pkgs     map[string]*catPackage
	pkgNames []string // sorted
	// replacedBy maps a name to the entries that replace or skip it.
	replacedBy map[string][]*catEntry
	// props and deps are every bundle's properties and dependencies, in
	// rowid order: small beside the manifests, and read by every answer.
	props, deps map[string][]typedRow
	// listed are the image and version of every bundle that has an
	// image, which is all ListBundles answers of them beside what is
	// held above: its streams read no database for them (thousands of
	// streams, each a query per bundle, queued for the pool's few
	// connections, and a client reading the list beside them waited
	// behind them all).
	listed map[string]listedBundle
	// bundleRow reads a bundle's row by name; listRow too, but the
	// manifests only of a bundle without an image (ListBundles answers
	// the others without them: reading them cost every stream a copy of
	// each bundle's manifests, up to megabytes, and touched every page of
	// the file's mapping).
	bundleRow, listRow *sql.Stmt
}

type listedBundle struct{ path, version string }

type catPackage struct {
	name, defaultChannel string
	channels             map[string]*catChannel
	channelNames         []string // sorted
}

type catChannel struct {
	pkg, name, head string
	entries         map[string]*catEntry
	names           []string // sorted
}

type catEntry struct {
	ch *catChannel
	index.CatalogEntry
}

var _ CustomSchemaBackend = (*Catalog)(nil)

// OpenCatalog opens the database at path, made from a file-based catalog,
// to answer as upstream's opm serve answers that catalog.
func OpenCatalog(ctx context.Context, path string) (*Catalog, error) {
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		return nil, err
	}
	c, err := NewCatalog(ctx, s)
	if err != nil {
		_ = s.Close() // read-only; the read error is what matters
		return nil, err
	}
	return c, nil
}

// NewCatalog reads the channels of an open database; closing the Catalog
// closes s.
func NewCatalog(ctx context.Context, s *SQLite) (*Catalog, error) {
	c := &Catalog{SQLite: s, pkgs: map[string]*catPackage{}, replacedBy: map[string][]*catEntry{}}
	if err := c.read(ctx); err != nil {
		return nil, fmt.Errorf("open index %s: %w", s.path, err)
	}
	var err error
	if c.props, err = c.readTyped(ctx, "properties"); err != nil {
		return nil, fmt.Errorf("open index %s: %w", s.path, err)
	}
	if c.deps, err = c.readTyped(ctx, "dependencies"); err != nil {
		return nil, fmt.Errorf("open index %s: %w", s.path, err)
	}
	if c.bundleRow, err = c.db.PrepareContext(ctx, `SELECT name, bundle, bundlepath, version, skiprange FROM operatorbundle WHERE name = ?`); err != nil {
		return nil, fmt.Errorf("open index %s: %w", s.path, err)
	}
	// sqlite evaluates a CASE lazily: the bundle column's overflow pages
	// are not read for a bundle with an image.
	if c.listRow, err = c.db.PrepareContext(ctx, `SELECT name, CASE WHEN IFNULL(bundlepath, '') = '' THEN bundle END, bundlepath, version, skiprange FROM operatorbundle WHERE name = ?`); err != nil {
		_ = c.bundleRow.Close() // a read statement: nothing to lose
		return nil, fmt.Errorf("open index %s: %w", s.path, err)
	}
	return c, nil
}

// Close closes the database.
func (c *Catalog) Close() error {
	for _, st := range []*sql.Stmt{c.bundleRow, c.listRow} {
		if st != nil {
			_ = st.Close() // a read statement: nothing to lose
		}
	}
	return c.SQLite.Close()
}

// readTyped reads the (type, value) rows of properties or dependencies by
// bundle, in rowid order.
func (c *Catalog) readTyped(ctx context.Context, table string) (map[string][]typedRow, error) {
	out := map[string][]typedRow{}
	err := queryRows(ctx, c.db, `SELECT operatorbundle_name, type, value FROM `+table+` ORDER BY rowid`, func(r *sql.Rows) error {
		var name, typ, value sql.NullString
		if err := r.Scan(&name, &typ, &value); err != nil {
			return err
		}
		if name.Valid && typ.Valid && value.Valid {
			out[name.String] = append(out[name.String], typedRow{typ.String, value.String})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	return out, nil
}

func (c *Catalog) read(ctx context.Context) error {
	err := queryRows(ctx, c.db, `SELECT name, IFNULL(default_channel, '') FROM package`, func(r *sql.Rows) error {
		p := &catPackage{channels: map[string]*catChannel{}}
		if err := r.Scan(&p.name, &p.defaultChannel); err != nil {
			return err
		}
		c.pkgs[p.name] = p
		return nil
	})
	if err != nil {
		return fmt.Errorf("read packages: %w", err)
	}
	err = queryRows(ctx, c.db, `SELECT package_name, name, IFNULL(head_operatorbundle_name, '') FROM channel`, func(r *sql.Rows) error {
		ch := &catChannel{entries: map[string]*catEntry{}}
		if err := r.Scan(&ch.pkg, &ch.name, &ch.head); err != nil {
			return err
		}
		if p := c.pkgs[ch.pkg]; p != nil {
			p.channels[ch.name] = ch
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read channels: %w", err)
	}
	notes, err := index.ReadEntryNotes(ctx, c.db)
	if err != nil {
		return err
	}
	type chKey struct{ pkg, ch string }
	rows := map[chKey][]index.EntryDump{}
	bundlePkg := map[string]string{}
	tip := int64(-1)
	err = queryRows(ctx, c.db, `SELECT entry_id, IFNULL(channel_name, ''), IFNULL(package_name, ''), IFNULL(operatorbundle_name, ''),
		IFNULL(replaces, 0), IFNULL(depth, 0) FROM channel_entry ORDER BY entry_id`, func(r *sql.Rows) error {
		var e index.EntryDump
		var pkg string
		if err := r.Scan(&e.ID, &e.Channel, &pkg, &e.Bundle, &e.Replaces, &e.Depth); err != nil {
			return err
		}
		if n, ok := notes[index.EntryKey{Package: pkg, Channel: e.Channel, Bundle: e.Bundle}]; ok {
			e.EdgeOnly = n.EdgeOnly && e.Replaces == 0
			e.SkipRange, e.HasSkipRange = n.SkipRange, n.HasSkipRange
		}
		k := chKey{pkg, e.Channel}
		rows[k] = append(rows[k], e)
		if _, ok := bundlePkg[e.Bundle]; !ok {
			bundlePkg[e.Bundle] = pkg
		}
		if tip < 0 || e.Depth < tip {
			tip = e.Depth
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read channel entries: %w", err)
	}
	skipRanges := map[string]string{}
	c.listed = map[string]listedBundle{}
	err = queryRows(ctx, c.db, `SELECT name, IFNULL(skiprange, ''), IFNULL(bundlepath, ''), IFNULL(version, '') FROM operatorbundle`, func(r *sql.Rows) error {
		var name, sr, path, version string
		if err := r.Scan(&name, &sr, &path, &version); err != nil {
			return err
		}
		skipRanges[name] = sr
		if path != "" {
			c.listed[name] = listedBundle{path: path, version: version}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read bundles: %w", err)
	}
	for _, p := range c.pkgs {
		for _, ch := range p.channels {
			p.channelNames = append(p.channelNames, ch.name)
			entries := index.ChannelEntries(rows[chKey{p.name, ch.name}], tip, func(n string) (string, bool) {
				sr, ok := skipRanges[n]
				return sr, ok && bundlePkg[n] == p.name
			})
			for _, e := range entries {
				ce := &catEntry{ch: ch, CatalogEntry: e}
				ch.entries[e.Name] = ce
				ch.names = append(ch.names, e.Name)
			}
		}
		sort.Strings(p.channelNames)
		c.pkgNames = append(c.pkgNames, p.name)
	}
	sort.Strings(c.pkgNames)
	c.each(func(e *catEntry) {
		if e.Replaces != "" {
			c.replacedBy[e.Replaces] = append(c.replacedBy[e.Replaces], e)
		}
		for _, s := range e.Skips {
			if s != e.Replaces {
				c.replacedBy[s] = append(c.replacedBy[s], e)
			}
		}
	})
	return nil
}

func queryRows(ctx context.Context, db *sql.DB, q string, f func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// each calls f for every entry, by package, channel and bundle name.
func (c *Catalog) each(f func(*catEntry)) {
	for _, pn := range c.pkgNames {
		p := c.pkgs[pn]
		for _, cn := range p.channelNames {
			ch := p.channels[cn]
			for _, n := range ch.names {
				f(ch.entries[n])
			}
		}
	}
}

// Stats counts packages and the bundles that are entries of a channel.
func (c *Catalog) Stats(context.Context) (Stats, error) {
	bundles := map[string]bool{}
	c.each(func(e *catEntry) { bundles[e.Name] = true })
	return Stats{Packages: len(c.pkgNames), Bundles: len(bundles)}, nil
}

// ListPackages sends every package name, sorted.
func (c *Catalog) ListPackages(_ context.Context, send func(string) error) error {
	for _, n := range c.pkgNames {
		if err := send(n); err != nil {
			return err
		}
	}
	return nil
}

// GetPackage answers a package with its channels (sorted by name), their
// heads and deprecations.
func (c *Catalog) GetPackage(_ context.Context, name string) (*api.Package, error) {
	p := c.pkgs[name]
	if p == nil {
		return nil, &NotFoundError{fmt.Sprintf("package %q not found", name)}
	}
	out := &api.Package{Name: name, DefaultChannelName: p.defaultChannel, Deprecation: c.packageDeprecation(name)}
	for _, cn := range p.channelNames {
		out.Channels = append(out.Channels, &api.Channel{Name: cn, CsvName: p.channels[cn].head, Deprecation: c.channelDeprecation(name, cn)})
	}
	return out, nil
}

// channel finds a package's channel, or upstream's not-found answer
// (quoted names; pkgFormat words the missing package).
func (c *Catalog) channel(pkgFormat, pkg, channel string) (*catChannel, error) {
	p := c.pkgs[pkg]
	if p == nil {
		return nil, &NotFoundError{fmt.Sprintf(pkgFormat, pkg)}
	}
	ch := p.channels[channel]
	if ch == nil {
		return nil, &NotFoundError{fmt.Sprintf("package %q, channel %q not found", pkg, channel)}
	}
	return ch, nil
}

// GetBundle answers an entry of a channel, without replaces and skips.
func (c *Catalog) GetBundle(ctx context.Context, pkg, channel, csvName string) (*api.Bundle, error) {
	ch, err := c.channel("package %q not found", pkg, channel)
	if err != nil {
		return nil, err
	}
	e := ch.entries[csvName]
	if e == nil {
		return nil, &NotFoundError{fmt.Sprintf("package %q, channel %q, bundle %q not found", pkg, channel, csvName)}
	}
	return c.bundle(ctx, e, false)
}

// GetBundleForChannel answers the channel head, whole, without replaces
// and skips.
func (c *Catalog) GetBundleForChannel(ctx context.Context, pkg, channel string) (*api.Bundle, error) {
	ch, err := c.channel("package %q not found", pkg, channel)
	if err != nil {
		return nil, err
	}
	e := ch.entries[ch.head]
	if e == nil {
		return nil, &NotFoundError{fmt.Sprintf("package %q, channel %q, bundle %q not found", pkg, channel, ch.head)}
	}
	return c.bundle(ctx, e, false)
}

// GetChannelEntriesThatReplace sends, for every entry that replaces
// csvName, and again for every entry that skips it (other than as its
// replaces), the entry with its replaces.
func (c *Catalog) GetChannelEntriesThatReplace(_ context.Context, csvName string, send func(*api.ChannelEntry) error) error {
	list := c.replacedBy[csvName]
	if len(list) == 0 {
		return &NotFoundError{fmt.Sprintf("no channel entries found that replace %s", csvName)}
	}
	for _, e := range list {
		if err := send(&api.ChannelEntry{PackageName: e.ch.pkg, ChannelName: e.ch.name, BundleName: e.Name, Replaces: e.Replaces}); err != nil {
			return err
		}
	}
	return nil
}

// GetBundleThatReplaces answers the entry of the channel that replaces or
// skips csvName (the first by name when several do; upstream takes any).
func (c *Catalog) GetBundleThatReplaces(ctx context.Context, csvName, pkg, channel string) (*api.Bundle, error) {
	ch, err := c.channel("package %s not found", pkg, channel)
	if err != nil {
		return nil, err
	}
	for _, n := range ch.names {
		e := ch.entries[n]
		if e.Replaces == csvName || contains(e.Skips, csvName) {
			return c.bundle(ctx, e, false)
		}
	}
	return nil, &NotFoundError{fmt.Sprintf("no entry found for package %q, channel %q", pkg, channel)}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *Catalog) provides(name string, g GVK) bool {
	for _, n := range c.providers[gvkValue(g)] {
		if n == name {
			return true
		}
	}
	return false
}

func noProvider(g GVK) error {
	return &NotFoundError{fmt.Sprintf("no channel entries found that provide group:%q version:%q kind:%q", g.Group, g.Version, g.Kind)}
}

// providerEntries are the channel entries upstream answers for an entry
// whose bundle provides an API: one with its replaces, and one per skipped
// name other than that (only names in the channel unless anyChannel).
func providerEntries(e *catEntry, anyChannel bool) []*api.ChannelEntry {
	out := []*api.ChannelEntry{{PackageName: e.ch.pkg, ChannelName: e.ch.name, BundleName: e.Name, Replaces: e.Replaces}}
	for _, s := range e.Skips {
		if s == e.Replaces {
			continue
		}
		if _, in := e.ch.entries[s]; anyChannel || in {
			out = append(out, &api.ChannelEntry{PackageName: e.ch.pkg, ChannelName: e.ch.name, BundleName: e.Name, Replaces: s})
		}
	}
	return out
}

// GetChannelEntriesThatProvide sends the entries of every channel entry
// whose bundle provides the API.
func (c *Catalog) GetChannelEntriesThatProvide(_ context.Context, g GVK, send func(*api.ChannelEntry) error) error {
	var out []*api.ChannelEntry
	if len(c.providers[gvkValue(g)]) > 0 {
		c.each(func(e *catEntry) {
			if c.provides(e.Name, g) {
				out = append(out, providerEntries(e, true)...)
			}
		})
	}
	if len(out) == 0 {
		return noProvider(g)
	}
	for _, e := range out {
		if err := send(e); err != nil {
			return err
		}
	}
	return nil
}

// latestProviders are the entries of the channel heads that provide the
// API, by package and channel.
func (c *Catalog) latestProviders(g GVK) []*api.ChannelEntry {
	var out []*api.ChannelEntry
	if len(c.providers[gvkValue(g)]) == 0 {
		return nil
	}
	for _, pn := range c.pkgNames {
		p := c.pkgs[pn]
		for _, cn := range p.channelNames {
			ch := p.channels[cn]
			if e := ch.entries[ch.head]; e != nil && c.provides(e.Name, g) {
				out = append(out, providerEntries(e, false)...)
			}
		}
	}
	return out
}

// GetLatestChannelEntriesThatProvide sends the entries of the channel
// heads that provide the API (upstream looks no further than the heads).
func (c *Catalog) GetLatestChannelEntriesThatProvide(_ context.Context, g GVK, send func(*api.ChannelEntry) error) error {
	out := c.latestProviders(g)
	if len(out) == 0 {
		return noProvider(g)
	}
	for _, e := range out {
		if err := send(e); err != nil {
			return err
		}
	}
	return nil
}

// GetDefaultBundleThatProvides answers the head of a default channel that
// provides the API, of the first such package by name.
func (c *Catalog) GetDefaultBundleThatProvides(ctx context.Context, g GVK) (*api.Bundle, error) {
	latest := c.latestProviders(g)
	if len(latest) == 0 {
		return nil, noProvider(g)
	}
	for _, e := range latest {
		if p := c.pkgs[e.PackageName]; p != nil && e.ChannelName == p.defaultChannel {
			return c.GetBundle(ctx, e.PackageName, e.ChannelName, e.BundleName)
		}
	}
	return nil, &NotFoundError{fmt.Sprintf("no entry found that provides group:%q version:%q kind:%q", g.Group, g.Version, g.Kind)}
}

// ListBundles sends every entry of every channel, with its replaces, skips
// and skipRange; the manifests (csvJson, object) only of bundles without
// an image, as upstream's opm serve.
func (c *Catalog) ListBundles(ctx context.Context, send func(*api.Bundle) error) error {
	// The catalog does not change while served: walk it in place (a
	// stream waiting for its client holds no copy of the entries, 8,000
	// pointers in a 5,000-bundle catalog), building each bundle when
	// sent from what is held (c.listed), reading the database only for
	// a bundle without an image, so no connection is held while the
	// client is slow to read.
	for _, pn := range c.pkgNames {
		p := c.pkgs[pn]
		for _, cn := range p.channelNames {
			ch := p.channels[cn]
			for _, n := range ch.names {
				b, err := c.bundle(ctx, ch.entries[n], true)
				if err != nil {
					return err
				}
				if err := send(b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// bundle reads an entry's bundle as upstream's opm serve answers it: in
// list, with replaces and skips and without manifests when it has an
// image; otherwise without replaces and skips.
func (c *Catalog) bundle(ctx context.Context, e *catEntry, list bool) (*api.Bundle, error) {
	if l, ok := c.listed[e.Name]; ok && list {
		r := bundleRow{name: sql.NullString{String: e.Name, Valid: true}, path: sql.NullString{String: l.path, Valid: true}, version: sql.NullString{String: l.version, Valid: true}}
		b, err := c.catalogBundle(ctx, r, e.ch.pkg, e.ch.name, false)
		if err != nil {
			return nil, err
		}
		b.SkipRange, b.Replaces, b.Skips = e.SkipRange, e.Replaces, append([]string(nil), e.Skips...)
		return b, nil
	}
	var r bundleRow
	stmt := c.bundleRow
	if list {
		stmt = c.listRow
	}
	err := stmt.QueryRowContext(ctx, e.Name).Scan(&r.name, &r.content, &r.path, &r.version, &r.skipRange)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{fmt.Sprintf("package %q, channel %q, bundle %q not found", e.ch.pkg, e.ch.name, e.Name)}
	}
	if err != nil {
		return nil, c.wrap("bundle "+e.Name, err)
	}
	b, err := c.catalogBundle(ctx, r, e.ch.pkg, e.ch.name, !list || r.path.String == "")
	if err != nil {
		return nil, err
	}
	b.SkipRange = e.SkipRange
	if list {
		b.Replaces, b.Skips = e.Replaces, append([]string(nil), e.Skips...)
	}
	return b, nil
}

// catalogBundle is apiBundle as the catalog says it: provided APIs from the
// olm.gvk properties and required ones from olm.gvk.required, in property
// order, without plurals (a catalog has none); the manifests (csvJson,
// object) only withManifests.
func (c *Catalog) catalogBundle(ctx context.Context, r bundleRow, pkg, channel string, withManifests bool) (*api.Bundle, error) {
	s := c.SQLite
	out := &api.Bundle{}
	if withManifests && r.content.String != "" {
		objs, csv, err := s.manifests(r.name.String, r.content.String)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", r.name.String, err)
		}
		out.Object, out.CsvJson = objs, csv
	}
	out.CsvName, out.PackageName, out.ChannelName = r.name.String, pkg, channel
	out.BundlePath, out.Version = r.path.String, r.version.String
	out.Deprecation = s.bundleDeprecation(pkg, r.name.String)
	props, deps := c.props[r.name.String], c.deps[r.name.String]
	var required []typedRow
	for _, p := range props {
		if servedProperty(p.typ) {
			out.Properties = append(out.Properties, &api.Property{Type: p.typ, Value: p.value})
		}
		if p.typ == "olm.gvk.required" {
			required = append(required, typedRow{gvkType, p.value})
		}
	}
	if withManifests && out.CsvJson == "" && len(out.Object) == 0 {
		csv, err := s.csvFromMetadata(ctx, out.CsvName, pkg, out.Version, props)
		if err != nil {
			return nil, err
		}
		if csv != "" {
			out.CsvJson, out.Object = csv, []string{csv}
		}
	}
	for _, d := range deps {
		out.Dependencies = append(out.Dependencies, &api.Dependency{Type: d.typ, Value: d.value})
	}
	out.ProvidedApis = gvks(props, false)
	out.RequiredApis = gvks(required, false)
	return out, nil
}
