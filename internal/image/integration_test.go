package image

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/image/layerfs/tartest"
	"github.com/opmkit/opm/internal/registrytest"
)

// These tests talk to Debian's docker-registry (CNCF distribution) and check
// our images with skopeo and umoci, independent implementations.

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	registrytest.RequireTool(t, name)
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestRealRegistrySkopeoRoundTrip(t *testing.T) {
	r := registrytest.Start(t)
	ctx := context.Background()
	c := mustClient(t, Options{UseHTTP: true})
	img, _ := BuildBundleImage(testBundle(), testLabels())
	want, _ := img.Digest()
	ref := r.Ref("etcd-bundle:0.9.4")
	if _, err := c.Write(ctx, img, mustRef(t, ref)); err != nil {
		t.Fatal(err)
	}

	var inspect struct {
		Digest string
		Labels map[string]string
	}
	if err := json.Unmarshal([]byte(run(t, "skopeo", "inspect", "--tls-verify=false", "docker://"+ref)), &inspect); err != nil {
		t.Fatal(err)
	}
	if inspect.Digest != want.String() || inspect.Labels[labelPackage] != "etcd" {
		t.Errorf("skopeo inspect: %+v", inspect)
	}
	var raw struct {
		MediaType string
		Config    struct{ MediaType string }
		Layers    []struct{ MediaType string }
	}
	if err := json.Unmarshal([]byte(run(t, "skopeo", "inspect", "--raw", "--tls-verify=false", "docker://"+ref)), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.MediaType != "application/vnd.oci.image.manifest.v1+json" || raw.Config.MediaType != "application/vnd.oci.image.config.v1+json" ||
		len(raw.Layers) != 1 || raw.Layers[0].MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
		t.Errorf("media types: %+v", raw)
	}

	// skopeo copies our push to an OCI layout; we read that layout back.
	dir := t.TempDir()
	run(t, "skopeo", "copy", "--src-tls-verify=false", "docker://"+ref, "oci:"+filepath.Join(dir, "from-skopeo")+":0.9.4")
	im, err := c.Open(ctx, mustRef(t, "oci:"+filepath.Join(dir, "from-skopeo")+":0.9.4"))
	if err != nil {
		t.Fatal(err)
	}
	if im.Digest != want {
		t.Errorf("skopeo's layout copy has digest %s, want %s", im.Digest, want)
	}
	im.Close()
	f, labels, err := c.OpenFS(ctx, mustRef(t, "oci:"+filepath.Join(dir, "from-skopeo")+":0.9.4"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat("manifests/etcdclusters.crd.yaml"); err != nil || labels[labelPackage] != "etcd" {
		t.Errorf("OpenFS: %v, labels %v", err, labels)
	}
	f.Close()

	// An OCI layout we write is read by skopeo and umoci.
	layout := filepath.Join(dir, "ours")
	if _, err := c.Write(ctx, img, mustRef(t, "oci:"+layout+":v1")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(run(t, "skopeo", "inspect", "oci:"+layout+":v1")), &inspect); err != nil {
		t.Fatal(err)
	}
	if inspect.Labels[labelPackage] != "etcd" {
		t.Errorf("skopeo inspect of our layout: %+v", inspect)
	}
	if out := run(t, "umoci", "ls", "--layout", layout); strings.TrimSpace(out) != "v1" {
		t.Errorf("umoci ls: %q", out)
	}
	// Our archives too.
	for _, a := range []string{"oci-archive:" + filepath.Join(dir, "o.tar") + ":v1", "docker-archive:" + filepath.Join(dir, "d.tar")} {
		if _, err := c.Write(ctx, img, mustRef(t, a)); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(run(t, "skopeo", "inspect", a)), &inspect); err != nil {
			t.Fatal(err)
		}
		if inspect.Labels[labelPackage] != "etcd" {
			t.Errorf("skopeo inspect %s: %+v", a, inspect)
		}
	}
}

// TestRealRegistryFormats: images skopeo converts to Docker v2s2 and to zstd
// layers open and flatten the same.
func TestRealRegistryFormats(t *testing.T) {
	r := registrytest.Start(t)
	ctx := context.Background()
	c := mustClient(t, Options{UseHTTP: true})
	img, _ := BuildBundleImage(testBundle(), testLabels())
	layout := filepath.Join(t.TempDir(), "l")
	if _, err := c.Write(ctx, img, mustRef(t, "oci:"+layout+":v1")); err != nil {
		t.Fatal(err)
	}
	// zstd first: afterwards skopeo would reuse the gzip blob it already pushed.
	run(t, "skopeo", "copy", "--dest-tls-verify=false", "--dest-compress-format", "zstd", "oci:"+layout+":v1", "docker://"+r.Ref("zstd:1"))
	run(t, "skopeo", "copy", "--dest-tls-verify=false", "--format", "v2s2", "oci:"+layout+":v1", "docker://"+r.Ref("v2s2:1"))
	for ref, mt := range map[string]string{
		r.Ref("v2s2:1"): "application/vnd.docker.image.rootfs.diff.tar.gzip",
		r.Ref("zstd:1"): "application/vnd.oci.image.layer.v1.tar+zstd",
	} {
		im, err := c.Open(ctx, mustRef(t, ref))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(im.Layers()[0].MediaType); got != mt {
			t.Errorf("%s: layer media type %s, want %s", ref, got, mt)
		}
		f, err := im.FS(ctx)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if b, _ := f.ReadFile("metadata/annotations.yaml"); !strings.Contains(string(b), "etcd") {
			t.Errorf("%s: annotations %q", ref, b)
		}
		f.Close()
		im.Close()
	}
}

// TestRealRegistryMount: appending a layer to an image in another repository
// of the same registry mounts the base layers.
func TestRealRegistryMount(t *testing.T) {
	r := registrytest.Start(t)
	target, _ := url.Parse(r.URL())
	rec := &recorder{next: httputil.NewSingleHostReverseProxy(target)}
	proxy := httptest.NewServer(rec)
	defer proxy.Close()
	addr := strings.TrimPrefix(proxy.URL, "http://")

	ctx := context.Background()
	c := mustClient(t, Options{UseHTTP: true})
	base, _ := BuildBundleImage(testBundle(), testLabels())
	if _, err := c.Write(ctx, base, mustRef(t, addr+"/base:1")); err != nil {
		t.Fatal(err)
	}
	rec.take()
	im, err := c.Open(ctx, mustRef(t, addr+"/base:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	lb := NewLayerBuilder()
	lb.AddFile("database/index.db", []byte("db"))
	l, _ := lb.Layer()
	out, _ := AppendLayer(im.V1Image(ctx), l, nil)
	if _, err := c.Write(ctx, out, mustRef(t, addr+"/index:1")); err != nil {
		t.Fatal(err)
	}
	reqs := rec.take()
	baseLayer := im.Layers()[0].Digest.String()
	if got := matching(reqs, "POST", "mount="+strings.ReplaceAll(baseLayer, ":", "%3A")); len(got) != 1 {
		t.Errorf("no cross-repository mount of %s: %v", baseLayer, reqs)
	}
	if got := matching(reqs, "GET", baseLayer); len(got) != 0 {
		t.Errorf("base layer downloaded: %v", got)
	}
}

// isolateCredentials points every credential location at an empty temp home.
func isolateCredentials(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("DOCKER_CONFIG", "")
	return home
}

func TestRealRegistryAuth(t *testing.T) {
	r := registrytest.Start(t, registrytest.WithAuth("alice", "s3cret-pw"))
	ctx := context.Background()
	img, _ := BuildBundleImage(testBundle(), testLabels())
	pushPull := func(t *testing.T, o Options, repo string) error {
		t.Helper()
		o.CAFile = r.CAFile
		c := mustClient(t, o)
		ref := mustRef(t, r.Ref(repo))
		if _, err := c.Write(ctx, img, ref); err != nil {
			return err
		}
		im, err := c.Open(ctx, ref)
		if err != nil {
			return err
		}
		return im.Close()
	}

	t.Run("REGISTRY_AUTH_FILE", func(t *testing.T) {
		home := isolateCredentials(t)
		t.Setenv("REGISTRY_AUTH_FILE", r.WriteAuthFile(t, filepath.Join(home, "auth.json"), "", "alice", "s3cret-pw"))
		if err := pushPull(t, Options{}, "a/b:1"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("DOCKER_CONFIG", func(t *testing.T) {
		home := isolateCredentials(t)
		t.Setenv("DOCKER_CONFIG", filepath.Join(home, "docker"))
		r.WriteAuthFile(t, filepath.Join(home, "docker", "config.json"), "", "alice", "s3cret-pw")
		if err := pushPull(t, Options{}, "a/b:2"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("authfile flag wins", func(t *testing.T) {
		home := isolateCredentials(t)
		t.Setenv("REGISTRY_AUTH_FILE", r.WriteAuthFile(t, filepath.Join(home, "env.json"), "", "alice", "wrong"))
		good := r.WriteAuthFile(t, filepath.Join(home, "flag.json"), "", "alice", "s3cret-pw")
		if err := pushPull(t, Options{AuthFile: good}, "a/b:3"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("per-namespace entry", func(t *testing.T) {
		home := isolateCredentials(t)
		path := filepath.Join(home, ".config", "containers", "auth.json")
		os.MkdirAll(filepath.Dir(path), 0o700)
		body := `{"auths":{` +
			`"` + r.Addr + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("alice:wrong")) + `"},` +
			`"` + r.Addr + `/team":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("alice:s3cret-pw")) + `"}}}`
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := pushPull(t, Options{}, "team/op:1"); err != nil {
			t.Fatalf("namespace entry not used: %v", err)
		}
		if err := pushPull(t, Options{}, "other/op:1"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("registry-wide wrong entry: %v", err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		home := isolateCredentials(t)
		p := r.WriteAuthFile(t, filepath.Join(home, "auth.json"), "", "alice", "not-the-pw")
		err := pushPull(t, Options{AuthFile: p}, "a/b:4")
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("want ErrUnauthorized, got %v", err)
		}
		msg := err.Error()
		if !strings.Contains(msg, r.Addr) || !strings.Contains(msg, p) {
			t.Errorf("error does not name the registry and the credentials file: %s", msg)
		}
		for _, secret := range []string{"not-the-pw", base64.StdEncoding.EncodeToString([]byte("alice:not-the-pw"))} {
			if strings.Contains(msg, secret) {
				t.Errorf("error leaks credentials: %s", msg)
			}
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		isolateCredentials(t)
		err := pushPull(t, Options{}, "a/b:5")
		if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "none were found") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestRealRegistryTLS(t *testing.T) {
	r := registrytest.Start(t, registrytest.WithTLS())
	ctx := context.Background()
	img, _ := BuildBundleImage(testBundle(), testLabels())
	ref := mustRef(t, r.Ref("tls/x:1"))

	_, err := mustClient(t, Options{}).Write(ctx, img, ref)
	if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "--ca-file") {
		t.Fatalf("default TLS verification: %v", err)
	}
	if _, err := mustClient(t, Options{CAFile: r.CAFile}).Write(ctx, img, ref); err != nil {
		t.Fatalf("with --ca-file: %v", err)
	}
	c := mustClient(t, Options{SkipTLSVerify: true})
	im, err := c.Open(ctx, ref)
	if err != nil {
		t.Fatalf("with --skip-tls-verify: %v", err)
	}
	im.Close()
	if _, err := mustClient(t, Options{}).Open(ctx, ref); !errors.Is(err, ErrTLS) {
		t.Fatalf("default TLS verification on pull: %v", err)
	}
	// A plain HTTP registry is refused without --use-http.
	plain := registrytest.Start(t)
	if _, err := mustClient(t, Options{}).Write(ctx, img, mustRef(t, plain.Ref("p:1"))); err == nil || !strings.Contains(err.Error(), "--use-http") {
		t.Fatalf("plain HTTP without --use-http: %v", err)
	}
}

// TestRealRegistryHostileImages pushes crafted layers and checks that opening
// refuses each one with its own message and writes nothing outside the work dir.
func TestRealRegistryHostileImages(t *testing.T) {
	r := registrytest.Start(t)
	ctx := context.Background()
	work := t.TempDir()
	outside := filepath.Join(filepath.Dir(work), "outside-"+filepath.Base(work))
	c := mustClient(t, Options{UseHTTP: true, TempDir: filepath.Join(work, "tmp")})
	os.MkdirAll(filepath.Join(work, "tmp"), 0o755)
	for name, tc := range map[string]struct {
		entries []tartest.Entry
		want    string
	}{
		"dotdot":     {[]tartest.Entry{{Name: "../../" + filepath.Base(outside) + "/passwd", Body: "x"}}, "path escapes the image root"},
		"absolute":   {[]tartest.Entry{{Name: outside + "/abs", Body: "x"}}, "absolute path"},
		"symlink":    {[]tartest.Entry{{Name: "evil", Typ: tar.TypeSymlink, Link: "/"}, {Name: "evil" + outside + "/f", Body: "x"}}, `parent "evil" is a symbolic link`},
		"sparse-2g":  {[]tartest.Entry{{Name: "disk.img", Size: 2 << 30, NoBody: true}}, "size 2.0 GiB is over the 512.0 MiB limit"},
		"device":     {[]tartest.Entry{{Name: "dev/sda", Typ: tar.TypeBlock, DevMajor: 8}}, "device node"},
		"hardlink":   {[]tartest.Entry{{Name: "h", Typ: tar.TypeLink, Link: "../../etc/shadow"}}, "points outside the image root"},
		"symlinkout": {[]tartest.Entry{{Name: "l", Typ: tar.TypeSymlink, Link: "../../../etc"}}, "points outside the image root"},
	} {
		t.Run(name, func(t *testing.T) {
			layer, err := LayerFromTar(tartest.Make(t, tc.entries...))
			if err != nil {
				t.Fatal(err)
			}
			img, _ := NewImage(ImageConfig{}, layer)
			ref := mustRef(t, r.Ref("hostile/"+name+":1"))
			if _, err := c.Write(ctx, img, ref); err != nil {
				t.Fatal(err)
			}
			im, err := c.Open(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			defer im.Close()
			f, err := im.FS(ctx)
			if err == nil {
				f.Close()
				t.Fatal("hostile layer accepted")
			}
			d, _ := layer.Digest()
			if !errors.Is(err, ErrUnsafeLayer) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), d.String()) {
				t.Errorf("error %q\nwant %q and layer %s", err, tc.want, d)
			}
			if _, err := os.Lstat(outside); !os.IsNotExist(err) {
				t.Errorf("something was written outside the work dir: %v", err)
			}
			if left, _ := os.ReadDir(filepath.Join(work, "tmp")); len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}
