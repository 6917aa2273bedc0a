//go:build !containers_image_openpgp

package image

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUntaggedBuildHonoursPolicy: an opm built without the
// containers_image_openpgp tag cannot verify signatures; a policy that
// asks for them refuses every registry pull, saying how to build one that
// can, and a policy that accepts anything changes nothing. (make test runs
// this package once without the tag for it.)
func TestUntaggedBuildHonoursPolicy(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ref, err := ParseReference("registry.example/op/bundle:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy string
		refuse bool
	}{
		{`{"default":[{"type":"reject"}]}`, true},
		{`{"default":[{"type":"insecureAcceptAnything"}]}`, false},
	} {
		p := filepath.Join(t.TempDir(), "policy.json")
		if err := os.WriteFile(p, []byte(tc.policy), 0o600); err != nil {
			t.Fatal(err)
		}
		c := mustClient(t, Options{SignaturePolicy: p})
		err := c.verifySignature(context.Background(), ref, []byte(`{}`))
		if tc.refuse {
			if !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "containers_image_openpgp") {
				t.Errorf("%s: %v", tc.policy, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", tc.policy, err)
		}
	}
}
