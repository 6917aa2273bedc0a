// Package openshift holds what opm knows of OpenShift releases: the
// Kubernetes release each one ships (the one table of it in opm), and the
// com.redhat.openshift.versions syntax by which a bundle names the
// OpenShift releases whose catalogs it goes into.
package openshift

import (
	"fmt"
	"strconv"
	"strings"
)

// Release is an OpenShift minor release, such as 4.16.
type Release struct{ Major, Minor int }

func (r Release) String() string { return fmt.Sprintf("%d.%d", r.Major, r.Minor) }

// Less orders releases.
func (r Release) Less(o Release) bool {
	return r.Major < o.Major || (r.Major == o.Major && r.Minor < o.Minor)
}

// KubeRelease is a Kubernetes minor release, such as 1.29.
type KubeRelease struct{ Major, Minor int }

func (k KubeRelease) String() string { return fmt.Sprintf("%d.%d", k.Major, k.Minor) }

// kubeOf is the Kubernetes minor release of each OpenShift 4 release,
// from 4.1 on. OpenShift 4.3 skipped Kubernetes 1.15; from there each
// release moves one Kubernetes release on (4.x ships 1.(x+13)). Add a row
// for each new release: TestTableKnowsEveryReleaseInTheCorpus fails when a
// bundle of ../shared names a release this table does not know.
var kubeOf = []struct {
	ocp  Release
	kube KubeRelease
}{
	{Release{4, 1}, KubeRelease{1, 13}},
	{Release{4, 2}, KubeRelease{1, 14}},
	{Release{4, 3}, KubeRelease{1, 16}},
	{Release{4, 4}, KubeRelease{1, 17}},
	{Release{4, 5}, KubeRelease{1, 18}},
	{Release{4, 6}, KubeRelease{1, 19}},
	{Release{4, 7}, KubeRelease{1, 20}},
	{Release{4, 8}, KubeRelease{1, 21}},
	{Release{4, 9}, KubeRelease{1, 22}},
	{Release{4, 10}, KubeRelease{1, 23}},
	{Release{4, 11}, KubeRelease{1, 24}},
	{Release{4, 12}, KubeRelease{1, 25}},
	{Release{4, 13}, KubeRelease{1, 26}},
	{Release{4, 14}, KubeRelease{1, 27}},
	{Release{4, 15}, KubeRelease{1, 28}},
	{Release{4, 16}, KubeRelease{1, 29}},
	{Release{4, 17}, KubeRelease{1, 30}},
	{Release{4, 18}, KubeRelease{1, 31}},
	{Release{4, 19}, KubeRelease{1, 32}},
	{Release{4, 20}, KubeRelease{1, 33}},
	{Release{4, 21}, KubeRelease{1, 34}},
	{Release{4, 22}, KubeRelease{1, 35}},
}

// Kube returns the Kubernetes release OpenShift release r ships, and
// whether the table knows r.
func Kube(r Release) (KubeRelease, bool) {
	for _, row := range kubeOf {
		if row.ocp == r {
			return row.kube, true
		}
	}
	return KubeRelease{}, false
}

// First and Latest are the oldest and newest releases the table knows.
func First() Release  { return kubeOf[0].ocp }
func Latest() Release { return kubeOf[len(kubeOf)-1].ocp }

// Releases lists the releases the table knows, oldest first.
func Releases() []Release {
	out := make([]Release, len(kubeOf))
	for i, row := range kubeOf {
		out[i] = row.ocp
	}
	return out
}

// ParseRelease reads "4.16" or "v4.16" (a patch, "4.16.3", is allowed and
// dropped).
func ParseRelease(s string) (Release, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Release{}, fmt.Errorf("%q is not an OpenShift release such as 4.16", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || (len(p) > 1 && p[0] == '0') {
			return Release{}, fmt.Errorf("%q is not an OpenShift release such as 4.16", s)
		}
		n[i] = v
	}
	return Release{n[0], n[1]}, nil
}

// Range is the OpenShift releases a com.redhat.openshift.versions value
// names: Min and later when Open, else Min through Max.
type Range struct {
	Min, Max Release
	Open     bool
	// Legacy marks the two comma-separated forms still accepted
	// ("v4.5,v4.6" and "v4.6,v4.5", both meaning v4.5 and later).
	Legacy bool
}

// Newest is the newest release the range reaches: Max, or for an open
// range the newest release the table knows (or Min, if newer).
func (r Range) Newest() Release {
	if !r.Open {
		return r.Max
	}
	if l := Latest(); r.Min.Less(l) {
		return l
	}
	return r.Min
}

// Contains says whether release v is in the range.
func (r Range) Contains(v Release) bool {
	if v.Less(r.Min) {
		return false
	}
	return r.Open || !r.Max.Less(v)
}

func (r Range) String() string {
	switch {
	case r.Open:
		return r.Min.String() + " and later"
	case r.Min == r.Max:
		return "only " + r.Min.String()
	}
	return r.Min.String() + " to " + r.Max.String()
}

// ParseVersions reads a com.redhat.openshift.versions value as Red Hat's
// catalog builds read it: "v4.12" (that release and later), "=v4.14"
// (that release only), "v4.12-v4.16" (a range, both ends included), and
// the two legacy lists "v4.5,v4.6" and "v4.6,v4.5" (v4.5 and later). Each
// release is written with its "v"; spaces and other commas are refused,
// as the catalog builds refuse them.
func ParseVersions(s string) (Range, error) {
	if s == "v4.5,v4.6" || s == "v4.6,v4.5" {
		return Range{Min: Release{4, 5}, Open: true, Legacy: true}, nil
	}
	if strings.TrimSpace(s) == "" {
		return Range{}, fmt.Errorf("the value is empty")
	}
	if strings.ContainsAny(s, " \t") {
		return Range{}, fmt.Errorf("%q holds a space; write it without spaces, e.g. v4.12-v4.16", s)
	}
	if strings.Contains(s, ",") {
		return Range{}, fmt.Errorf("%q is a list: only the legacy lists v4.5,v4.6 and v4.6,v4.5 are accepted; write a range such as v4.12-v4.16", s)
	}
	one := func(p string) (Release, error) {
		if !strings.HasPrefix(p, "v") {
			return Release{}, fmt.Errorf("%q lacks the leading v (write v%s)", p, p)
		}
		r, err := ParseRelease(p)
		if err != nil {
			return Release{}, err
		}
		if strings.Count(p, ".") != 1 {
			return Release{}, fmt.Errorf("%q names a patch release; name the minor release, e.g. v%d.%d", p, r.Major, r.Minor)
		}
		return r, nil
	}
	if rest, ok := strings.CutPrefix(s, "="); ok {
		r, err := one(rest)
		if err != nil {
			return Range{}, err
		}
		return Range{Min: r, Max: r}, nil
	}
	if lo, hi, ok := strings.Cut(s, "-"); ok {
		a, err := one(lo)
		if err != nil {
			return Range{}, err
		}
		b, err := one(hi)
		if err != nil {
			return Range{}, err
		}
		if b.Less(a) {
			return Range{}, fmt.Errorf("%q ends before it starts", s)
		}
		return Range{Min: a, Max: b}, nil
	}
	r, err := one(s)
	if err != nil {
		return Range{}, err
	}
	return Range{Min: r, Open: true}, nil
}
