// Package olmv1 says which bundles of a catalog OLM v1's operator-controller
// installs, and why not: the checks it makes when it resolves a bundle
// (declared dependencies) and when it renders a registry+v1 bundle (owned
// API services, webhooks and the certificate provider they need, install
// modes, the bundle validators), read from the bundle's manifests in the
// catalog (olm.bundle.object), from olm.csv.metadata, or from the bundle
// image.
package olmv1

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing/fstest"
	"text/tabwriter"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// What a verdict was read from.
const (
	FromBundleObjects = "olm.bundle.object"
	FromCSVMetadata   = "olm.csv.metadata"
	FromImage         = "image"
	// FromProperties: the catalog has neither manifests nor CSV metadata
	// for the bundle; only its properties (dependencies) were read.
	FromProperties = "properties"
)

// Reason is one thing that stops or limits an install.
type Reason struct {
	Rule string `json:"rule"`
	// Severity is "error" (operator-controller refuses the bundle),
	// "warning" (it installs it where a condition holds) or "unknown"
	// (the catalog does not say; --pull reads the image).
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// Verdict is what operator-controller does with one bundle.
type Verdict struct {
	Package     string   `json:"package"`
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Image       string   `json:"image"`
	Channels    []string `json:"channels"`
	Installable bool     `json:"installable"`
	// Complete is false when what the catalog holds cannot tell about
	// everything operator-controller checks (webhooks, with
	// olm.csv.metadata only).
	Complete bool     `json:"complete"`
	From     string   `json:"from"`
	Reasons  []Reason `json:"reasons"`
}

// Pull opens a bundle image's files.
type Pull func(ctx context.Context, image string) (*bundle.Bundle, error)

// Options tune Judge.
type Options struct {
	// Package, when set, judges only this package's bundles.
	Package string
	// Pull, when set, reads bundles the catalog has no manifests for
	// from their images.
	Pull Pull
}

// rules are the validation rules that stand for operator-controller's own
// checks of a registry+v1 bundle: the olmv1 set (but dependencies, read
// from the catalog's properties, as operator-controller's resolver reads
// them) and the bundle validators it shares with OLM v0.
var rules = []string{
	validate.RuleOLMv1AllNamespaces.ID,
	validate.RuleOLMv1Webhooks.ID,
	validate.RuleOLMv1APIServices.ID,
	validate.RuleOLMv1Deployments.ID,
	validate.RuleOLMv1OperatorConditions.ID,
	"crd-duplicate",
	"manifest-supported-kind",
}

// Judge returns a verdict for every bundle of c (of opts.Package), by
// package then bundle name.
func Judge(ctx context.Context, c *fbc.Catalog, opts Options) ([]Verdict, error) {
	if err := c.CheckPackage(opts.Package); err != nil {
		return nil, err
	}
	channels := map[[2]string][]string{}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			k := [2]string{ch.Package, e.Name}
			channels[k] = append(channels[k], ch.Name)
		}
	}
	var out []Verdict
	for i := range c.Bundles {
		b := &c.Bundles[i]
		if opts.Package != "" && b.Package != opts.Package {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chs := channels[[2]string{b.Package, b.Name}]
		sort.Strings(chs)
		v, err := judge(ctx, b, chs, opts.Pull)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func judge(ctx context.Context, b *fbc.Bundle, channels []string, pull Pull) (Verdict, error) {
	v := Verdict{Package: b.Package, Name: b.Name, Image: b.Image, Channels: channels, Reasons: []Reason{}, Complete: true}
	if channels == nil {
		v.Channels = []string{}
	}
	if ver, err := graph.Version(b); err == nil {
		v.Version = ver.String()
	}
	// operator-controller's resolver refuses a bundle that declares a
	// dependency, whatever its manifests say.
	for _, p := range b.Properties {
		for _, t := range validate.OLMv1DependencyTypes {
			if p.Type == t {
				v.Reasons = append(v.Reasons, Reason{Rule: validate.RuleOLMv1Dependencies.ID, Severity: "error",
					Message: fmt.Sprintf("declares a dependency (%s %s): operator-controller does not resolve dependencies and refuses the bundle", p.Type, compact(p.Value))})
			}
		}
	}
	objs, meta, err := catalogManifests(b)
	if err != nil {
		return v, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	switch {
	case len(objs) > 0:
		v.From = FromBundleObjects
		bb, loadErr := bundle.Load(bundleFS(b, channels, objs))
		v.Reasons = append(v.Reasons, check(b.Name, bb, loadErr)...)
	case pull != nil && b.Image != "":
		v.From = FromImage
		bb, err := pull(ctx, b.Image)
		if bb == nil && err != nil {
			return v, fmt.Errorf("bundle %s: pull %s: %w", b.Name, b.Image, err)
		}
		v.Reasons = append(v.Reasons, check(b.Name, bb, err)...)
	case meta != nil:
		v.From = FromCSVMetadata
		v.Reasons = append(v.Reasons, checkMetadata(meta)...)
		v.Complete = false
		v.Reasons = append(v.Reasons, Reason{Rule: validate.RuleOLMv1Webhooks.ID, Severity: "unknown",
			Message: "the catalog has only olm.csv.metadata for this bundle, which does not say whether it has webhooks or what its manifests hold; --pull reads the bundle image"})
	default:
		v.From = FromProperties
		v.Complete = false
		v.Reasons = append(v.Reasons, Reason{Rule: validate.RuleOLMv1AllNamespaces.ID, Severity: "unknown",
			Message: "the catalog has neither the bundle's manifests nor its CSV metadata; --pull reads the bundle image"})
	}
	v.Installable = true
	for _, r := range v.Reasons {
		if r.Severity == "error" {
			v.Installable = false
		}
	}
	return v, nil
}

// check runs operator-controller's bundle checks over a loaded bundle.
func check(name string, b *bundle.Bundle, loadErr error) []Reason {
	rep := validate.Check(name, b, loadErr, validate.Options{Select: rules})
	var out []Reason
	for _, f := range rep.Findings {
		sev := "warning"
		if f.Severity == validate.Error {
			sev = "error"
		} else if f.Severity != validate.Warning {
			continue
		}
		out = append(out, Reason{Rule: f.Rule, Severity: sev, Message: f.Message})
	}
	return out
}

func checkMetadata(m *fbc.CSVInstall) []Reason {
	var out []Reason
	if modes, all := m.Supported(); !all {
		out = append(out, Reason{Rule: validate.RuleOLMv1AllNamespaces.ID, Severity: "error", Message: validate.OLMv1InstallModesMessage(modes)})
	}
	for _, a := range m.OwnedAPIServices {
		out = append(out, Reason{Rule: validate.RuleOLMv1APIServices.ID, Severity: "error",
			Message: fmt.Sprintf("owns API service %s: operator-controller does not install API services", a)})
	}
	return out
}

// catalogManifests returns the bundle's manifests (olm.bundle.object) and
// its olm.csv.metadata, whichever the catalog has.
func catalogManifests(b *fbc.Bundle) ([][]byte, *fbc.CSVInstall, error) {
	var objs [][]byte
	var meta *fbc.CSVInstall
	for i, p := range b.Properties {
		switch p.Type {
		case fbc.PropertyBundleObject:
			o, err := fbc.DecodeBundleObject(p.Value)
			if err != nil {
				return nil, nil, fmt.Errorf("properties[%d] (olm.bundle.object): %w", i, err)
			}
			if o.Ref != "" {
				return nil, nil, fmt.Errorf("properties[%d] (olm.bundle.object): a reference to %s instead of data: opm does not read referenced manifests", i, o.Ref)
			}
			objs = append(objs, o.Data)
		case fbc.PropertyCSVMetadata:
			m, err := fbc.DecodeCSVMetadata(p.Value)
			if err != nil {
				return nil, nil, fmt.Errorf("properties[%d] (olm.csv.metadata): %w", i, err)
			}
			meta = m
		}
	}
	return objs, meta, nil
}

// bundleFS lays a catalog bundle out as a bundle directory: its manifests
// under manifests/ (named by kind and name, as operator-sdk writes them)
// and the annotations that name its package and channels.
func bundleFS(b *fbc.Bundle, channels []string, objs [][]byte) fs.FS {
	fsys := fstest.MapFS{}
	for i, o := range objs {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(o, &head) // a manifest that does not parse is the loader's to report
		name := strings.ToLower(fmt.Sprintf("%s_%s", head.Metadata.Name, head.Kind))
		name = strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r < ' ' {
				return '_'
			}
			return r
		}, name)
		p := path.Join("manifests", fmt.Sprintf("%02d-%s.json", i, name))
		fsys[p] = &fstest.MapFile{Data: o, Mode: 0o644}
	}
	ann := map[string]map[string]string{"annotations": {
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   b.Package,
		"operators.operatorframework.io.bundle.channels.v1":  strings.Join(channels, ","),
	}}
	data, _ := json.Marshal(ann) // strings only: cannot fail
	fsys["metadata/annotations.yaml"] = &fstest.MapFile{Data: data, Mode: 0o644}
	return fsys
}

func compact(v json.RawMessage) string {
	s := string(v)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// PackageVerdict is a package's line of `list packages --olmv1`.
type PackageVerdict struct {
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Head           string `json:"head"`
	// HeadInstallable says whether the default channel's head is
	// installable: what a ClusterExtension naming only the package gets.
	HeadInstallable bool `json:"headInstallable"`
	// HeadComplete is the head's verdict's Complete.
	HeadComplete bool `json:"-"`
	Bundles      int  `json:"bundles"`
	// Installable counts the bundles known installable; Unknown those
	// that nothing known stops but whose catalog entry cannot tell
	// everything (yes?: olm.csv.metadata only), counted apart.
	Installable int `json:"installable"`
	Unknown     int `json:"installableUnknown"`
	// Complete is false when some verdict could not read everything.
	Complete bool `json:"complete"`
}

// Packages sums verdicts up by package of c.
func Packages(c *fbc.Catalog, verdicts []Verdict) []PackageVerdict {
	by := map[[2]string]Verdict{}
	for _, v := range verdicts {
		by[[2]string{v.Package, v.Name}] = v
	}
	heads := map[[2]string]string{}
	for i := range c.Channels {
		ch := &c.Channels[i]
		if h := graph.Heads(ch); len(h) == 1 {
			heads[[2]string{ch.Package, ch.Name}] = h[0]
		}
	}
	rows := []PackageVerdict{}
	for _, p := range c.Packages {
		r := PackageVerdict{Name: p.Name, DefaultChannel: p.DefaultChannel, Complete: true}
		r.Head = heads[[2]string{p.Name, p.DefaultChannel}]
		for _, v := range verdicts {
			if v.Package != p.Name {
				continue
			}
			r.Bundles++
			switch {
			case v.Installable && v.Complete:
				r.Installable++
			case v.Installable:
				r.Unknown++
			}
			r.Complete = r.Complete && v.Complete
		}
		if v, ok := by[[2]string{p.Name, r.Head}]; ok {
			r.HeadInstallable, r.HeadComplete = v.Installable, v.Complete
		}
		rows = append(rows, r)
	}
	return rows
}

func yesNo(ok, complete bool) string {
	switch {
	case !ok:
		return "no"
	case !complete:
		return "yes?"
	}
	return "yes"
}

// WriteTable prints verdicts a row each: package, bundle, version,
// installable (yes, no, or yes? when incomplete) and why.
func WriteTable(w io.Writer, verdicts []Verdict) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tBUNDLE\tVERSION\tINSTALLABLE\tWHY")
	for _, v := range verdicts {
		var why []string
		for _, r := range v.Reasons {
			why = append(why, r.Severity+": "+r.Message)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", printable.Name(v.Package), printable.Name(v.Name), printable.Name(v.Version),
			yesNo(v.Installable, v.Complete), printable.Text(strings.Join(why, "; ")))
	}
	return tw.Flush()
}

// WritePackageTable prints package sums a row each.
func WritePackageTable(w io.Writer, rows []PackageVerdict) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDEFAULT CHANNEL\tHEAD\tHEAD INSTALLABLE\tINSTALLABLE BUNDLES")
	for _, r := range rows {
		count := fmt.Sprintf("%d/%d", r.Installable, r.Bundles)
		if r.Unknown > 0 {
			count += fmt.Sprintf(" (%d yes?)", r.Unknown)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", printable.Name(r.Name), printable.Name(r.DefaultChannel), printable.Name(r.Head),
			yesNo(r.HeadInstallable, r.HeadComplete), count)
	}
	return tw.Flush()
}
