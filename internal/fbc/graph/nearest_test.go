package graph

import (
	"testing"

	"github.com/blang/semver/v4"
	"github.com/stretchr/testify/assert"
)

// TestNearest: the versions either side of one that is not there (issue 36).
func TestNearest(t *testing.T) {
	p := demo(t)
	for ver, want := range map[string]string{
		"9.9.9": "the highest version in channel stable is 2.0.0",
		"1.1.5": "the nearest versions in channel stable are 1.1.0 (below) and 1.2.0 (above)",
		"0.0.1": "the lowest version in channel stable is 1.0.0",
	} {
		assert.Equal(t, want, p.Nearest([]string{"stable"}, semver.MustParse(ver)), ver)
	}
	assert.Equal(t, "no bundle of channel nope has a version", p.Nearest([]string{"nope"}, semver.MustParse("1.0.0")))
	assert.True(t, p.HasVersion(semver.MustParse("1.2.0")))
	assert.False(t, p.HasVersion(semver.MustParse("1.1.5")))
}
