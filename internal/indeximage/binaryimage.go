package indeximage

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/blang/semver/v4"
)

// ServingImageRepository is where releases publish opm's own serving image
// (internal/servingimage), tagged with the release version (v1.2.3).
const ServingImageRepository = "ghcr.io/opmkit/opm"

// gitDescribe matches what `git describe` appends past a tag (-3-gabc1234),
// the marks of a build that no release published.
var gitDescribe = regexp.MustCompile(`-[0-9]+-g[0-9a-f]{7,}`)

// DefaultBinaryImage is the base of new index images for an opm of this
// version: opm's serving image of the same release, so that the opm serving
// the database is the one that wrote it. A development build (version
// "dev", a bare commit, a `git describe` past a tag, -dirty, a snapshot) has
// no published image, and the error says to pass --binary-image.
func DefaultBinaryImage(version string) (string, error) {
	v := strings.TrimSpace(version)
	notReleased := func(why string) (string, error) {
		return "", fmt.Errorf("this opm (version %q) is a development build with no published serving image (%s): pass -i/--binary-image, "+
			"for example an image built with `make serving-image IMAGE=REF` or %s:vX.Y.Z of a release", version, why, ServingImageRepository)
	}
	if !strings.HasPrefix(v, "v") {
		return notReleased("not a vX.Y.Z release version")
	}
	sv, err := semver.Parse(v[1:])
	if err != nil {
		return notReleased("not a vX.Y.Z release version")
	}
	if strings.HasSuffix(v, "-dirty") || gitDescribe.MatchString(v) {
		return notReleased("built from a commit past its tag")
	}
	for _, p := range sv.Pre {
		if strings.HasPrefix(p.VersionStr, "snapshot") {
			return notReleased("a snapshot")
		}
	}
	if len(sv.Build) > 0 {
		return notReleased("carries build metadata")
	}
	return ServingImageRepository + ":" + v, nil
}
