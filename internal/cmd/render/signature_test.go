package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/registrytest"
)

// TestRenderSignaturePolicy: --signature-policy applies to the pulls of a
// command run through cobra: a reject policy refuses the bundle image and
// says which policy did; an accepting one renders it.
func TestRenderSignaturePolicy(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	o := cmdtest.New(t)
	ref := reg.Ref("bundle:1")
	r := o.Run("bundle", "build", "-d", "../../../testdata/bundles/valid", "-t", ref, "--use-http")
	if r.Code != 0 {
		t.Fatalf("bundle build: %d %s", r.Code, r.ErrOut)
	}
	dir := t.TempDir()
	reject := filepath.Join(dir, "reject.json")
	accept := filepath.Join(dir, "accept.json")
	if err := os.WriteFile(reject, []byte(`{"default":[{"type":"reject"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(accept, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = o.Run("render", "--use-http", "--signature-policy", reject, ref)
	if r.Code == 0 || !strings.Contains(r.ErrOut, "refused by the signature policy "+reject) || !strings.Contains(r.ErrOut, ref) {
		t.Errorf("reject: exit %d: %s", r.Code, r.ErrOut)
	}
	// Global: before the command, as every root flag.
	r = o.Run("--signature-policy", reject, "render", "--use-http", ref)
	if r.Code == 0 || !strings.Contains(r.ErrOut, "refused by the signature policy "+reject) {
		t.Errorf("reject, global flag: exit %d: %s", r.Code, r.ErrOut)
	}
	r = o.Run("render", "--use-http", "--signature-policy", accept, ref)
	if r.Code != 0 || !strings.Contains(r.Out, `"schema": "olm.bundle"`) {
		t.Errorf("accept: exit %d: %s", r.Code, r.ErrOut)
	}
}
