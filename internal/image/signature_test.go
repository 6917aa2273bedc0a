//go:build containers_image_openpgp

package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containers/image/v5/copy"
	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/signature"
	"github.com/containers/image/v5/signature/signer"
	"github.com/containers/image/v5/signature/sigstore"
	"github.com/containers/image/v5/types"

	"github.com/opmkit/opm/internal/registrytest"
)

// writeFile writes data to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// sigstoreKey generates a sigstore (cosign) key pair in dir and returns
// the private and public key files.
func sigstoreKey(t *testing.T, dir, name string, pass []byte) (string, string) {
	t.Helper()
	kp, err := sigstore.GenerateKeyPair(pass)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name+".key", string(kp.PrivateKey)), writeFile(t, dir, name+".pub", string(kp.PublicKey))
}

// registriesDir says, for every registry, that signatures are sigstore
// attachments (the sha256-<digest>.sig tag beside the image, as cosign
// writes them).
func registriesDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "default.yaml", "default-docker:\n  use-sigstore-attachments: true\n")
	return dir
}

// signInPlace signs the image ref names with the sigstore key, attaching
// the signature to the registry as cosign does: containers/image copies the
// image onto itself with a signer, which pushes the attachment.
func signInPlace(t *testing.T, ref, keyFile string, pass []byte, regDir string) {
	t.Helper()
	ctx := context.Background()
	s, err := sigstore.NewSigner(sigstore.WithPrivateKeyFile(keyFile, pass))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := docker.ParseReference("//" + ref)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := signature.NewPolicyContext(&signature.Policy{Default: signature.PolicyRequirements{signature.NewPRInsecureAcceptAnything()}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Destroy() }()
	sys := &types.SystemContext{DockerInsecureSkipTLSVerify: types.OptionalBoolTrue, RegistriesDirPath: regDir}
	if _, err := copy.Image(ctx, pc, r, r, &copy.Options{SourceCtx: sys, DestinationCtx: sys, Signers: []*signer.Signer{s}}); err != nil {
		t.Fatalf("sign %s: %v", ref, err)
	}
}

// TestSignaturePolicyRealRegistry: every pull is checked against the
// policy: reject refuses, a sigstoreSigned policy takes the image signed
// with its key and refuses an unsigned one and one signed with another key.
func TestSignaturePolicyRealRegistry(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	ctx := context.Background()
	dir := t.TempDir()
	regDir := registriesDir(t)
	push := mustClient(t, Options{UseHTTP: true})
	img, _ := BuildBundleImage(testBundle(), testLabels())
	for _, tag := range []string{"signed:1", "unsigned:1", "other:1"} {
		if _, err := push.Write(ctx, img, mustRef(t, reg.Ref(tag))); err != nil {
			t.Fatal(err)
		}
	}
	pass := []byte("test passphrase")
	key, pub := sigstoreKey(t, dir, "good", pass)
	otherKey, _ := sigstoreKey(t, dir, "other", pass)
	signInPlace(t, reg.Ref("signed:1"), key, pass, regDir)
	signInPlace(t, reg.Ref("other:1"), otherKey, pass, regDir)

	open := func(policy, ref string) error {
		t.Helper()
		c := mustClient(t, Options{UseHTTP: true, SignaturePolicy: policy, RegistriesDir: regDir})
		im, err := c.OpenString(ctx, ref)
		if err == nil {
			_ = im.Close()
		}
		return err
	}

	reject := writeFile(t, dir, "reject.json", `{"default":[{"type":"reject"}]}`)
	err := open(reject, reg.Ref("signed:1"))
	if !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), reject) || !strings.Contains(err.Error(), "signed:1") {
		t.Fatalf("reject policy: %v", err)
	}
	// A scope for the test registry overrides the default.
	scoped := writeFile(t, dir, "scoped.json", `{"default":[{"type":"insecureAcceptAnything"}],
 "transports":{"docker":{"`+reg.Addr+`/unsigned":[{"type":"reject"}]}}}`)
	if err := open(scoped, reg.Ref("signed:1")); err != nil {
		t.Errorf("scoped policy, other repository: %v", err)
	}
	if err := open(scoped, reg.Ref("unsigned:1")); !errors.Is(err, ErrSignature) {
		t.Errorf("scoped policy, rejected repository: %v", err)
	}

	sig := writeFile(t, dir, "sigstore.json", `{"default":[{"type":"reject"}],
 "transports":{"docker":{"`+reg.Addr+`":[{"type":"sigstoreSigned","keyPath":"`+pub+`","signedIdentity":{"type":"matchRepository"}}]}}}`)
	if err := open(sig, reg.Ref("signed:1")); err != nil {
		t.Errorf("signed image: %v", err)
	}
	if err := open(sig, reg.Ref("unsigned:1")); !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "signature") {
		t.Errorf("unsigned image: %v", err)
	}
	if err := open(sig, reg.Ref("other:1")); !errors.Is(err, ErrSignature) {
		t.Errorf("image signed with another key: %v", err)
	}
	// Concurrent pulls through one client (as bundle validate and index add
	// make them) each get their evaluation.
	c := mustClient(t, Options{UseHTTP: true, SignaturePolicy: sig, RegistriesDir: regDir})
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			ref := reg.Ref("signed:1")
			if i%2 == 1 {
				ref = reg.Ref("unsigned:1")
			}
			im, err := c.OpenString(ctx, ref)
			if err == nil {
				_ = im.Close()
			}
			if (i%2 == 1) != errors.Is(err, ErrSignature) {
				errs <- fmt.Errorf("%s: %v", ref, err)
				return
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent pull: %v", err)
		}
	}
	// By digest too: what is verified is the manifest pulled.
	d, _ := img.Digest()
	if err := open(sig, reg.Ref("signed")+"@"+d.String()); err != nil {
		t.Errorf("signed image by digest: %v", err)
	}
}

// TestSignaturePolicyLookup: --signature-policy, then the user's, then the
// system's; none at all accepts anything and says so once.
func TestSignaturePolicyLookup(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	sys := writeFile(t, t.TempDir(), "policy.json", `{"default":[{"type":"insecureAcceptAnything"}]}`)
	if p, err := findPolicy("", sys); err != nil || p != sys {
		t.Errorf("system only: %q %v", p, err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755); err != nil {
		t.Fatal(err)
	}
	user := writeFile(t, filepath.Join(home, ".config", "containers"), "policy.json", `{"default":[{"type":"reject"}]}`)
	if p, err := findPolicy("", sys); err != nil || p != user {
		t.Errorf("user before system: %q %v", p, err)
	}
	if p, err := findPolicy(sys, sys+".none"); err != nil || p != sys {
		t.Errorf("flag first: %q %v", p, err)
	}
	if _, err := findPolicy(sys+".none", sys); err == nil || !strings.Contains(err.Error(), "--signature-policy") {
		t.Errorf("missing flag file: %v", err)
	}
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}

	var warnings []string
	c := mustClient(t, Options{Warn: func(m string) { warnings = append(warnings, m) }})
	c.systemPolicy = sys + ".none"
	for range 2 {
		st, err := c.policy()
		if err != nil || st.path != "" || st.pol != nil {
			t.Fatalf("no policy: %+v %v", st, err)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "not verified (insecureAcceptAnything)") {
		t.Errorf("warnings: %q", warnings)
	}
	// A policy that accepts every registry image needs no signature reads.
	c = mustClient(t, Options{SignaturePolicy: sys})
	if st, err := c.policy(); err != nil || st.pol != nil || st.path != sys {
		t.Errorf("accept-anything policy: %+v %v", st, err)
	}
	bad := writeFile(t, t.TempDir(), "bad.json", `{"default":[{"type":"nonsense"}]}`)
	c = mustClient(t, Options{SignaturePolicy: bad})
	if _, err := c.policy(); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad policy: %v", err)
	}
}
