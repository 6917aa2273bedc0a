package image

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeAuth(t *testing.T, path, key, user, pass string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	body := `{"auths":{"` + key + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)) + `"}}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCredentialOrder(t *testing.T) {
	home := isolateCredentials(t)
	runtime := filepath.Join(home, "run")
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	files := []struct{ path, env, envVal string }{
		{filepath.Join(home, "flag.json"), "", ""},
		{filepath.Join(home, "env.json"), "REGISTRY_AUTH_FILE", filepath.Join(home, "env.json")},
		{filepath.Join(home, "dc", "config.json"), "DOCKER_CONFIG", filepath.Join(home, "dc")},
		{filepath.Join(home, ".docker", "config.json"), "", ""},
		{filepath.Join(runtime, "containers", "auth.json"), "", ""},
		{filepath.Join(home, ".config", "containers", "auth.json"), "", ""},
	}
	for i, f := range files {
		writeAuth(t, f.path, "reg.example", "user", "pw"+string(rune('0'+i)))
		if f.env != "" {
			t.Setenv(f.env, f.envVal)
		}
	}
	if got := AuthFiles(files[0].path); len(got) != len(files) {
		t.Fatalf("AuthFiles = %v", got)
	}
	// Remove files from the front: each time the next one in order wins.
	for i, f := range files {
		authFile := ""
		if i == 0 {
			authFile = f.path
		}
		c := mustClient(t, Options{AuthFile: authFile})
		cred, err := c.LookupCredentials("reg.example/org/repo")
		if err != nil {
			t.Fatal(err)
		}
		if cred.Password != "pw"+string(rune('0'+i)) || cred.Source != f.path {
			t.Errorf("step %d: got %q from %s, want file %s", i, cred.Password, cred.Source, f.path)
		}
		os.Remove(f.path)
	}
	// A missing --authfile is an error, not silently skipped.
	c := mustClient(t, Options{AuthFile: filepath.Join(home, "missing.json")})
	if _, err := c.LookupCredentials("reg.example/x"); err == nil {
		t.Error("missing --authfile accepted")
	}
}

func TestCredentialNamespacesAndNormalization(t *testing.T) {
	home := isolateCredentials(t)
	p := filepath.Join(home, "auth.json")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	body := `{"auths":{
		"quay.io":{"auth":"` + b64("u:host") + `"},
		"quay.io/org":{"auth":"` + b64("u:org") + `"},
		"quay.io/org/special":{"auth":"` + b64("u:repo") + `"},
		"https://index.docker.io/v1/":{"auth":"` + b64("u:hub") + `"},
		"tokens.example":{"identitytoken":"tok"}}}`
	os.WriteFile(p, []byte(body), 0o600)
	c := mustClient(t, Options{AuthFile: p})
	for repo, want := range map[string]string{
		"quay.io/other/x":          "host",
		"quay.io/org/x":            "org",
		"quay.io/org/special":      "repo",
		"quay.io/org/special/deep": "repo",
		"docker.io/library/etcd":   "hub",
	} {
		cred, err := c.LookupCredentials(repo)
		if err != nil || cred.Password != want {
			t.Errorf("%s: got %q, %v; want %q", repo, cred.Password, err, want)
		}
	}
	if cred, _ := c.LookupCredentials("tokens.example/x"); cred.IdentityToken != "tok" {
		t.Errorf("identity token: %+v", cred)
	}
	if cred, _ := c.LookupCredentials("nothing.example/x"); !cred.Empty() {
		t.Errorf("unexpected credentials %+v", cred)
	}
	os.WriteFile(p, []byte(`{"auths":{"x":{"auth":"%%%secret%%%"}}}`), 0o600)
	_, err := c.LookupCredentials("x/y")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad base64: %v", err)
	}
	os.WriteFile(p, []byte(`{"auths":{"x":{"auth":"c2VjcmV0"`), 0o600)
	if _, err := c.LookupCredentials("x/y"); err == nil || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("truncated JSON: %v", err)
	}
}

func TestCredentialHelpers(t *testing.T) {
	home := isolateCredentials(t)
	bin := filepath.Join(home, "bin")
	os.MkdirAll(bin, 0o755)
	// A docker-credential helper answers "get" with JSON for one server.
	helper := "#!/bin/sh\nread server\nif [ \"$server\" = \"helped.example\" ]; then\n" +
		"  echo '{\"ServerURL\":\"helped.example\",\"Username\":\"hu\",\"Secret\":\"hs\"}'\nelse\n" +
		"  echo 'credentials not found in native keychain'; exit 1\nfi\n"
	os.WriteFile(filepath.Join(bin, "docker-credential-fake"), []byte(helper), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	p := filepath.Join(home, "config.json")
	for _, body := range []string{
		`{"credHelpers":{"helped.example":"fake"}}`,
		`{"credsStore":"fake"}`,
	} {
		os.WriteFile(p, []byte(body), 0o600)
		c := mustClient(t, Options{AuthFile: p})
		cred, err := c.LookupCredentials("helped.example/org/x")
		if err != nil || cred.Username != "hu" || cred.Password != "hs" || cred.Source != "docker-credential-fake" {
			t.Errorf("%s: %+v, %v", body, cred, err)
		}
		if cred, err := c.LookupCredentials("other.example/x"); err != nil || !cred.Empty() {
			t.Errorf("%s: other registry: %+v, %v", body, cred, err)
		}
	}
}
