package catalogfilter

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// Config is what to keep of a catalog, read from either anchor's file.
type Config struct {
	// Kind is the file's kind: FilterConfiguration (operator-registry's)
	// or ImageSetConfiguration (oc-mirror's operator stanza).
	Kind string
	// Packages are kept; others go. Empty keeps every package (oc-mirror's
	// catalog without packages).
	Packages []Package
	// HeadsOnly, with no Packages, keeps only the head of every channel of
	// every package (oc-mirror's catalog without packages or full: true).
	HeadsOnly bool
}

// Package says what to keep of one package.
type Package struct {
	Name string
	// DefaultChannel, when set, becomes the package's default channel.
	DefaultChannel string
	// Channels, when set, are the channels kept; others go.
	Channels []Channel
	// Range, when set, bounds the versions kept in every kept channel that
	// has no range of its own.
	Range string
	// HeadsOnly keeps, of a channel without a range, only its head
	// (oc-mirror without full: true); with no Channels and no Range, the
	// head of every channel.
	HeadsOnly bool
}

// Channel says what to keep of one channel.
type Channel struct {
	Name string
	// Range, when set, is the versions kept (a blang/semver range).
	Range string
}

// fileHead is what tells the two kinds apart.
type fileHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type filterFile struct {
	fileHead
	Packages []struct {
		Name           string `json:"name"`
		DefaultChannel string `json:"defaultChannel"`
		Channels       []struct {
			Name         string `json:"name"`
			VersionRange string `json:"versionRange"`
		} `json:"channels"`
	} `json:"packages"`
}

type imageSetFile struct {
	fileHead
	Mirror struct {
		Operators        []imageSetCatalog `json:"operators"`
		AdditionalImages []imageSetImage   `json:"additionalImages"`
		BlockedImages    []imageSetImage   `json:"blockedImages"`
	} `json:"mirror"`
}

type imageSetImage struct {
	Name string `json:"name"`
}

// ImageSet is what opm alpha mirror --config reads of an
// ImageSetConfiguration: each catalog with what to keep of it, the
// additional images and the blocked ones.
type ImageSet struct {
	Catalogs []ImageSetCatalog
	// Additional are mirror.additionalImages: pull specs by tag or digest.
	Additional []string
	// Blocked are mirror.blockedImages: a reference, a repository or a
	// pattern (see mirror.Blocks).
	Blocked []string
}

// ImageSetCatalog is one entry of mirror.operators.
type ImageSetCatalog struct {
	// Ref is the catalog image (catalog:).
	Ref    string
	Config *Config
	// Ignored names the fields of the entry opm does not apply
	// (targetCatalog, targetTag), for a warning.
	Ignored []string
}

type imageSetCatalog struct {
	Catalog string `json:"catalog"`
	Full    bool   `json:"full"`
	// Read only to say they are not applied.
	TargetCatalog string `json:"targetCatalog"`
	TargetTag     string `json:"targetTag"`
	Packages      []struct {
		Name           string `json:"name"`
		DefaultChannel string `json:"defaultChannel"`
		MinVersion     string `json:"minVersion"`
		MaxVersion     string `json:"maxVersion"`
		Channels       []struct {
			Name       string `json:"name"`
			MinVersion string `json:"minVersion"`
			MaxVersion string `json:"maxVersion"`
		} `json:"channels"`
	} `json:"packages"`
}

// ParseConfig reads a FilterConfiguration or an ImageSetConfiguration
// (file names it in errors). Of an ImageSetConfiguration with several
// catalogs, the one whose catalog is source is used.
func ParseConfig(file string, data []byte, source string) (*Config, error) {
	var head fileHead
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	switch head.Kind {
	case "FilterConfiguration":
		return parseFilter(file, data)
	case "ImageSetConfiguration":
		return parseImageSet(file, data, source)
	}
	return nil, fmt.Errorf("%s: kind %q: want FilterConfiguration (apiVersion olm.operatorframework.io/v1alpha1) or oc-mirror's ImageSetConfiguration", file, head.Kind)
}

func parseFilter(file string, data []byte) (*Config, error) {
	var f filterFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if f.APIVersion != "olm.operatorframework.io/v1alpha1" {
		return nil, fmt.Errorf("%s: apiVersion %q: a FilterConfiguration is olm.operatorframework.io/v1alpha1", file, f.APIVersion)
	}
	cfg := &Config{Kind: f.Kind}
	if len(f.Packages) == 0 {
		return nil, fmt.Errorf("%s: packages: none listed: a FilterConfiguration lists the packages to keep", file)
	}
	for i, p := range f.Packages {
		if p.Name == "" {
			return nil, fmt.Errorf("%s: packages[%d].name: missing", file, i)
		}
		pk := Package{Name: p.Name, DefaultChannel: p.DefaultChannel}
		for j, ch := range p.Channels {
			if ch.Name == "" {
				return nil, fmt.Errorf("%s: packages[%d].channels[%d].name: missing", file, i, j)
			}
			if ch.VersionRange != "" {
				if err := checkRange(ch.VersionRange); err != nil {
					return nil, fmt.Errorf("%s: packages[%d].channels[%d].versionRange %q: %w", file, i, j, ch.VersionRange, err)
				}
			}
			pk.Channels = append(pk.Channels, Channel{Name: ch.Name, Range: ch.VersionRange})
		}
		cfg.Packages = append(cfg.Packages, pk)
	}
	return cfg, nil
}

func parseImageSet(file string, data []byte, source string) (*Config, error) {
	var f imageSetFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	ops := f.Mirror.Operators
	var cat *imageSetCatalog
	switch {
	case len(ops) == 0:
		return nil, fmt.Errorf("%s: mirror.operators: no catalog", file)
	case len(ops) == 1:
		cat = &ops[0]
	default:
		var names []string
		for i := range ops {
			names = append(names, ops[i].Catalog)
			if ops[i].Catalog == source {
				cat = &ops[i]
			}
		}
		if cat == nil {
			return nil, fmt.Errorf("%s: mirror.operators lists %d catalogs (%s) and none is %s: give the catalog as SOURCE", file, len(ops), strings.Join(names, ", "), source)
		}
	}
	return catalogConfig(file, f.Kind, cat)
}

// ParseImageSet reads an ImageSetConfiguration whole: every catalog of
// mirror.operators (each read as ParseConfig reads it), and
// mirror.additionalImages and mirror.blockedImages. file names it in
// errors.
func ParseImageSet(file string, data []byte) (*ImageSet, error) {
	var f imageSetFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if f.Kind != "ImageSetConfiguration" {
		return nil, fmt.Errorf("%s: kind %q: want oc-mirror's ImageSetConfiguration (apiVersion mirror.openshift.io/v2alpha1)", file, f.Kind)
	}
	set := &ImageSet{}
	seen := map[string]bool{}
	for i := range f.Mirror.Operators {
		cat := &f.Mirror.Operators[i]
		if cat.Catalog == "" {
			return nil, fmt.Errorf("%s: mirror.operators[%d].catalog: missing (the catalog image to filter and mirror)", file, i)
		}
		if seen[cat.Catalog] {
			return nil, fmt.Errorf("%s: mirror.operators[%d].catalog: %s is listed twice: give it once, with every package to keep", file, i, cat.Catalog)
		}
		seen[cat.Catalog] = true
		cfg, err := catalogConfig(fmt.Sprintf("%s: mirror.operators[%d] (%s)", file, i, cat.Catalog), f.Kind, cat)
		if err != nil {
			return nil, err
		}
		c := ImageSetCatalog{Ref: cat.Catalog, Config: cfg}
		for field, v := range map[string]string{"targetCatalog": cat.TargetCatalog, "targetTag": cat.TargetTag} {
			if v != "" {
				c.Ignored = append(c.Ignored, field)
			}
		}
		sort.Strings(c.Ignored)
		set.Catalogs = append(set.Catalogs, c)
	}
	for i, im := range f.Mirror.AdditionalImages {
		if im.Name == "" {
			return nil, fmt.Errorf("%s: mirror.additionalImages[%d].name: missing (an image by tag or digest)", file, i)
		}
		set.Additional = append(set.Additional, im.Name)
	}
	for i, im := range f.Mirror.BlockedImages {
		if im.Name == "" {
			return nil, fmt.Errorf("%s: mirror.blockedImages[%d].name: missing (an image, a repository or a pattern)", file, i)
		}
		set.Blocked = append(set.Blocked, im.Name)
	}
	if len(set.Catalogs) == 0 && len(set.Additional) == 0 {
		return nil, fmt.Errorf("%s: mirror.operators and mirror.additionalImages are empty: nothing to mirror", file)
	}
	return set, nil
}

// catalogConfig is what to keep of one catalog of an ImageSetConfiguration.
func catalogConfig(file, kind string, cat *imageSetCatalog) (*Config, error) {
	cfg := &Config{Kind: kind}
	for i, p := range cat.Packages {
		if p.Name == "" {
			return nil, fmt.Errorf("%s: packages[%d].name: missing", file, i)
		}
		rng, err := minMax(p.MinVersion, p.MaxVersion)
		if err != nil {
			return nil, fmt.Errorf("%s: packages[%d] (%s): %w", file, i, p.Name, err)
		}
		// oc-mirror refuses both mixes below: a range with full: true
		// (full keeps every bundle, a range only some) and a range on the
		// package and on one of its channels (which one would bound it?).
		if rng != "" && cat.Full {
			return nil, fmt.Errorf("%s: packages[%d] (%s): minVersion/maxVersion with full: true: full keeps every bundle; drop full: true to keep a range", file, i, p.Name)
		}
		pk := Package{Name: p.Name, DefaultChannel: p.DefaultChannel, Range: rng, HeadsOnly: !cat.Full}
		for j, ch := range p.Channels {
			if ch.Name == "" {
				return nil, fmt.Errorf("%s: packages[%d].channels[%d].name: missing", file, i, j)
			}
			r, err := minMax(ch.MinVersion, ch.MaxVersion)
			if err != nil {
				return nil, fmt.Errorf("%s: packages[%d].channels[%d] (%s): %w", file, i, j, ch.Name, err)
			}
			switch {
			case r != "" && cat.Full:
				return nil, fmt.Errorf("%s: packages[%d].channels[%d] (%s): minVersion/maxVersion with full: true: full keeps every bundle; drop full: true to keep a range", file, i, j, ch.Name)
			case r != "" && rng != "":
				return nil, fmt.Errorf("%s: packages[%d] (%s): minVersion/maxVersion on the package and on its channel %s: give the range on the package or on its channels, not both", file, i, p.Name, ch.Name)
			}
			pk.Channels = append(pk.Channels, Channel{Name: ch.Name, Range: r})
		}
		cfg.Packages = append(cfg.Packages, pk)
	}
	cfg.HeadsOnly = len(cfg.Packages) == 0 && !cat.Full
	return cfg, nil
}

// checkRange parses a versionRange as a blang/semver range. Files written
// for operator-registry may hold Masterminds constraints: a hyphen range
// parses here but means something else, so it is refused.
func checkRange(rng string) error {
	const how = "opm reads blang/semver ranges such as '>=1.0.0 <2.0.0' (a space for and, || for or)"
	if strings.Contains(rng, " - ") {
		return fmt.Errorf("a hyphen range is not read: %s", how)
	}
	if _, err := semver.ParseRange(rng); err != nil {
		return fmt.Errorf("%w: %s", err, how)
	}
	return nil
}

// minMax is oc-mirror's minVersion/maxVersion as a range (both ends in).
func minMax(lo, hi string) (string, error) {
	var parts []string
	for _, b := range []struct{ v, op, field string }{{lo, ">=", "minVersion"}, {hi, "<=", "maxVersion"}} {
		if b.v == "" {
			continue
		}
		if _, err := semver.ParseTolerant(b.v); err != nil {
			return "", fmt.Errorf("%s %q: %w", b.field, b.v, err)
		}
		parts = append(parts, b.op+strings.TrimPrefix(b.v, "v"))
	}
	return strings.Join(parts, " "), nil
}
