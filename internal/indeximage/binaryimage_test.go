package indeximage

import (
	"strings"
	"testing"
)

func TestDefaultBinaryImage(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"v0.1.0", "ghcr.io/opmkit/opm:v0.1.0"},
		{"v1.2.3", "ghcr.io/opmkit/opm:v1.2.3"},
		{"v2.0.0-rc.1", "ghcr.io/opmkit/opm:v2.0.0-rc.1"},
	} {
		got, err := DefaultBinaryImage(tc.version)
		if err != nil || got != tc.want {
			t.Errorf("DefaultBinaryImage(%q) = %q, %v; want %q", tc.version, got, err, tc.want)
		}
	}
	for _, v := range []string{
		"", "dev", "4ba71dd", "4ba71dd-dirty", "1.2.3", "v1.2", "v1.2.3-dirty",
		"v0.1.0-3-g4ba71dd", "v0.1.0-3-g4ba71dd-dirty", "v0.0.0-snapshot-181930e", "v1.2.3+meta",
	} {
		got, err := DefaultBinaryImage(v)
		if err == nil {
			t.Errorf("DefaultBinaryImage(%q) = %q, want an error", v, got)
			continue
		}
		if !strings.Contains(err.Error(), "--binary-image") || !strings.Contains(err.Error(), "make serving-image") {
			t.Errorf("DefaultBinaryImage(%q): error %q does not say what to do", v, err)
		}
	}
}
