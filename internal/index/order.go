package index

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// MaxReleaseLength is the longest spec.release a CSV may carry.
const MaxReleaseLength = 20

// Release is a parsed CSV spec.release: dot-separated identifiers. The zero
// value (nil) means "no release".
type Release []string

// ParseRelease parses a CSV spec.release. The empty string is no release.
// Rules (FORMATS.md "The release field"): dot-separated identifiers of
// [0-9A-Za-z-], at most 20 characters in all, no '+' build metadata, no empty
// identifier, no leading zero in a numeric identifier.
func ParseRelease(s string) (Release, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > MaxReleaseLength {
		return nil, fmt.Errorf("release %q is %d characters long; the limit is %d", s, len(s), MaxReleaseLength)
	}
	if strings.Contains(s, "+") {
		return nil, fmt.Errorf("release %q carries build metadata ('+'); a release is dot-separated identifiers of [0-9A-Za-z-] only", s)
	}
	ids := strings.Split(s, ".")
	for _, id := range ids {
		if id == "" {
			return nil, fmt.Errorf("release %q has an empty identifier (two dots, or a dot at an end)", s)
		}
		numeric := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				numeric = false
			default:
				return nil, fmt.Errorf("release %q: identifier %q holds %q; only [0-9A-Za-z-] are allowed", s, id, c)
			}
		}
		if numeric && len(id) > 1 && id[0] == '0' {
			return nil, fmt.Errorf("release %q: numeric identifier %q has a leading zero", s, id)
		}
	}
	return Release(ids), nil
}

// String is the release as written in the CSV.
func (r Release) String() string { return strings.Join(r, ".") }

// CompareReleases orders two releases: no release is below any release;
// otherwise identifiers are compared left to right, numeric ones
// numerically, numeric below alphanumeric, alphanumeric ones by ASCII, and a
// list that is a prefix of the other is lower.
func CompareReleases(a, b Release) int {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return -1
	case len(b) == 0:
		return 1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareIdent(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func compareIdent(a, b string) int {
	an, bn := isNumeric(a), isNumeric(b)
	switch {
	case an && bn:
		// No leading zeros (ParseRelease refuses them), so a longer number is
		// larger; this also works beyond uint64.
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

// Version is the position of a bundle in its package: spec.version, then
// spec.release.
type Version struct {
	Semver  semver.Version
	Release Release
}

// ParseVersion parses a CSV's spec.version (strict semver 2.0.0) and
// spec.release ("" when absent).
func ParseVersion(version, release string) (Version, error) {
	if version == "" {
		return Version{}, fmt.Errorf("spec.version is empty; a bundle needs a semver version such as 1.2.3")
	}
	v, err := semver.Parse(version)
	if err != nil {
		return Version{}, fmt.Errorf("spec.version %q is not a semantic version (semver 2.0.0, e.g. 1.2.3 or 1.2.3-rc.1): %v", version, err)
	}
	r, err := ParseRelease(release)
	if err != nil {
		return Version{}, fmt.Errorf("spec.release: %w", err)
	}
	if r != nil && len(v.Build) > 0 {
		return Version{}, fmt.Errorf("spec.version %q carries build metadata while spec.release %q is set; drop the build metadata", version, release)
	}
	return Version{Semver: v, Release: r}, nil
}

// Compare orders versions by semver precedence (build metadata ignored), then
// by release (CompareReleases).
func (v Version) Compare(o Version) int {
	if c := v.Semver.Compare(o.Semver); c != 0 {
		return c
	}
	return CompareReleases(v.Release, o.Release)
}

// String is version[-release] for messages: "1.2.3" or "1.2.3 release 4".
func (v Version) String() string {
	if len(v.Release) == 0 {
		return v.Semver.String()
	}
	return v.Semver.String() + " release " + v.Release.String()
}

// CompareVersions parses and compares two (spec.version, spec.release) pairs.
func CompareVersions(versionA, releaseA, versionB, releaseB string) (int, error) {
	a, err := ParseVersion(versionA, releaseA)
	if err != nil {
		return 0, err
	}
	b, err := ParseVersion(versionB, releaseB)
	if err != nil {
		return 0, err
	}
	return a.Compare(b), nil
}

// Versioned is anything with a name and a Version, such as a bundle in an
// index.
type Versioned interface {
	VersionName() string
	BundleVersion() Version
}

// CompareBundles orders two bundles of a package: by Version, and for equal
// versions by name, so that any sort is total and does not depend on input
// order. (Two bundles of one package with an equal version are refused by Add;
// the name tie-break only keeps sorting deterministic.)
func CompareBundles(a, b Versioned) int {
	if c := a.BundleVersion().Compare(b.BundleVersion()); c != 0 {
		return c
	}
	return strings.Compare(a.VersionName(), b.VersionName())
}

// SortBundles sorts s ascending by CompareBundles.
func SortBundles[T Versioned](s []T) {
	sort.SliceStable(s, func(i, j int) bool { return CompareBundles(s[i], s[j]) < 0 })
}

// sameMinor reports whether two versions share major.minor (used by
// semver-skippatch).
func sameMinor(a, b Version) bool {
	return a.Semver.Major == b.Semver.Major && a.Semver.Minor == b.Semver.Minor
}

// itoa is strconv.Itoa, kept short for messages.
