package servingimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/registrytest"
)

var (
	amd64 = image.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = image.Platform{OS: "linux", Architecture: "arm64"}
)

// fakeDir holds the fake opm binaries; TestMain removes it.
var fakeDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeDir != "" {
		_ = os.RemoveAll(fakeDir)
	}
	os.Exit(code)
}

// fakeOpm builds testdata/fakeopm for arch (static: no cgo) once per run.
var fakeOpm = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "servingimage-test-")
	if err != nil {
		return nil, err
	}
	fakeDir = dir
	out := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		bin := filepath.Join(dir, arch, "opm")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./testdata/fakeopm")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build fake opm for %s: %v\n%s", arch, err, b)
		}
		out[arch] = bin
	}
	return out, nil
})

func fakeBinaries(t *testing.T) map[string]string {
	t.Helper()
	bins, err := fakeOpm()
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

// hostBusybox is Debian's busybox-static, which the image needs a real one
// of for the tests that run it.
func hostBusybox(t *testing.T) string {
	t.Helper()
	const p = "/bin/busybox"
	if runtime.GOARCH != "amd64" {
		t.Skipf("skipping: the tests pair the host busybox with linux/amd64, and this is %s", runtime.GOARCH)
	}
	if _, err := checkStatic("busybox", p, amd64); err != nil {
		msg := fmt.Sprintf("no static %s (Debian: apt-get install -y busybox-static): %v", p, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("skipping: " + msg)
	}
	return p
}

// options for a two-platform image: the arm64 "busybox" is the arm64 fake
// opm, which is enough for the image to be built (nothing runs it).
func options(t *testing.T) Options {
	bins := fakeBinaries(t)
	return Options{
		Binaries: map[image.Platform]string{amd64: bins["amd64"], arm64: bins["arm64"]},
		Busybox:  map[image.Platform]string{amd64: hostBusybox(t), arm64: bins["arm64"]},
		CACerts:  caCerts(t),
		Version:  "v9.8.7",
		Revision: "0123456789abcdef0123456789abcdef01234567",
	}
}

func caCerts(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(DefaultCACerts); err == nil {
		return DefaultCACerts
	}
	// A machine without ca-certificates: any PEM certificate will do here.
	p := filepath.Join(t.TempDir(), "ca.crt")
	pem := "-----BEGIN CERTIFICATE-----\nMAo=\n-----END CERTIFICATE-----\n"
	if err := os.WriteFile(p, []byte(pem), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type entry struct {
	hdr  *tar.Header
	data []byte
}

// files flattens img's layers (no whiteouts: opm writes none here).
func files(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]entry{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		out = readTar(t, rc, out, true)
		rc.Close()
	}
	return out
}

// readTar adds the entries of a tar to into; sorted checks they are in order
// (true of each layer opm writes, not of a flattened export).
func readTar(t *testing.T, r io.Reader, into map[string]entry, sorted bool) map[string]entry {
	t.Helper()
	tr := tar.NewReader(r)
	var prev string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return into
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")
		if sorted && prev != "" && name <= prev {
			t.Errorf("layer entries not sorted: %s after %s", name, prev)
		}
		prev = name
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		into[name] = entry{h, data}
	}
}

func TestBuildContents(t *testing.T) {
	opts := options(t)
	b, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Platforms, []image.Platform{amd64, arm64}) || len(b.Images) != 2 {
		t.Fatalf("platforms %v, %d images", b.Platforms, len(b.Images))
	}
	im, err := b.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range im.Manifests {
		if d.Platform == nil || d.Platform.Architecture != b.Platforms[i].Architecture || d.Platform.OS != "linux" {
			t.Errorf("index entry %d: platform %v, want %v", i, d.Platform, b.Platforms[i])
		}
	}
	for i, img := range b.Images {
		p := b.Platforms[i]
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if cf.Architecture != p.Architecture || cf.OS != "linux" {
			t.Errorf("%s: config platform %s/%s", p, cf.OS, cf.Architecture)
		}
		if !slices.Equal(c.Entrypoint, []string{"/bin/opm"}) || !slices.Equal(c.Cmd, []string{"registry", "serve", "--database", "/database/index.db"}) {
			t.Errorf("%s: entrypoint %q cmd %q", p, c.Entrypoint, c.Cmd)
		}
		if c.User != "1001" || c.WorkingDir != "/tmp" {
			t.Errorf("%s: user %q workdir %q", p, c.User, c.WorkingDir)
		}
		if _, ok := c.ExposedPorts["50051/tcp"]; !ok || len(c.ExposedPorts) != 1 {
			t.Errorf("%s: exposed ports %v", p, c.ExposedPorts)
		}
		if !slices.ContainsFunc(c.Env, func(e string) bool { return strings.HasPrefix(e, "PATH=") && strings.Contains(e, ":/bin") }) {
			t.Errorf("%s: env %q has no PATH with /bin", p, c.Env)
		}
		for k, v := range map[string]string{
			"org.opencontainers.image.version":  "v9.8.7",
			"org.opencontainers.image.revision": opts.Revision,
			"org.opencontainers.image.source":   DefaultSource,
		} {
			if c.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", p, k, c.Labels[k], v)
			}
		}

		fs := files(t, img)
		want := map[string]struct {
			typ  byte
			mode int64
			link string
		}{
			"bin/opm":                           {tar.TypeReg, 0o755, ""},
			"bin/busybox":                       {tar.TypeReg, 0o755, ""},
			"bin/grpc_health_probe":             {tar.TypeSymlink, 0o777, "opm"},
			"bin/sh":                            {tar.TypeSymlink, 0o777, "busybox"},
			"bin/[[":                            {tar.TypeSymlink, 0o777, "busybox"},
			"bin/cp":                            {tar.TypeSymlink, 0o777, "busybox"},
			"tmp":                               {tar.TypeDir, 0o1777, ""},
			"etc/ssl/certs/ca-certificates.crt": {tar.TypeReg, 0o644, ""},
			"etc/passwd":                        {tar.TypeReg, 0o644, ""},
			"etc/group":                         {tar.TypeReg, 0o644, ""},
			"etc/nsswitch.conf":                 {tar.TypeReg, 0o644, ""},
		}
		for name, w := range want {
			e, ok := fs[name]
			if !ok {
				t.Errorf("%s: no %s in the image", p, name)
				continue
			}
			if e.hdr.Typeflag != w.typ || e.hdr.Mode != w.mode || e.hdr.Linkname != w.link || e.hdr.Uid != 0 || e.hdr.Gid != 0 {
				t.Errorf("%s: %s: type %c mode %o link %q owner %d:%d; want type %c mode %o link %q owner 0:0",
					p, name, e.hdr.Typeflag, e.hdr.Mode, e.hdr.Linkname, e.hdr.Uid, e.hdr.Gid, w.typ, w.mode, w.link)
			}
			if !e.hdr.ModTime.Equal(image.Epoch) {
				t.Errorf("%s: %s: mtime %v", p, name, e.hdr.ModTime)
			}
		}
		for _, a := range []string{"sh", "cp", "ls", "cat", "test", "[", "[[", "mkdir", "rm", "echo"} {
			if fs["bin/"+a].hdr == nil {
				t.Errorf("%s: no /bin/%s applet", p, a)
			}
		}
		if bin, _ := os.ReadFile(opts.Binaries[p]); !bytes.Equal(fs["bin/opm"].data, bin) {
			t.Errorf("%s: /bin/opm is not the %s binary", p, p)
		}
		if !strings.Contains(string(fs["etc/passwd"].data), "opm:x:1001:1001:") || !strings.Contains(string(fs["etc/group"].data), "opm:x:1001:") {
			t.Errorf("%s: passwd/group lack user 1001:\n%s%s", p, fs["etc/passwd"].data, fs["etc/group"].data)
		}
	}
}

func TestBuildDeterministic(t *testing.T) {
	opts := options(t)
	digest := func(o Options) v1.Hash {
		b, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := b.Index.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest(opts)
	if again := digest(opts); again != first {
		t.Errorf("same inputs gave %s then %s", first, again)
	}
	opts.Version = "v9.8.8"
	if other := digest(opts); other == first {
		t.Error("another version label gave the same digest")
	}
}

// The base layer (busybox, certificates, /etc, /tmp) does not depend on opm,
// so a registry keeps one copy of it across releases.
func TestBaseLayerSharedAcrossBinaries(t *testing.T) {
	opts := options(t)
	bins := fakeBinaries(t)
	one := Options{Binaries: map[image.Platform]string{amd64: bins["amd64"]}, Busybox: map[image.Platform]string{amd64: opts.Busybox[amd64]}, CACerts: opts.CACerts}
	two := one
	// Any other static amd64 executable stands for another opm.
	two.Binaries = map[image.Platform]string{amd64: opts.Busybox[amd64]}
	layerDigests := func(o Options) []v1.Hash {
		b, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		m, err := b.Images[0].Manifest()
		if err != nil {
			t.Fatal(err)
		}
		var out []v1.Hash
		for _, l := range m.Layers {
			out = append(out, l.Digest)
		}
		return out
	}
	a, b := layerDigests(one), layerDigests(two)
	if len(a) != 2 || len(b) != 2 || a[0] != b[0] || a[1] == b[1] {
		t.Errorf("layers %v and %v: want the same base layer and different opm layers", a, b)
	}
}

func TestBuildRejects(t *testing.T) {
	opts := options(t)
	bins := fakeBinaries(t)
	dynamic, err := exec.LookPath("ls") // any dynamically linked host program
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"dynamic opm", func(o *Options) { o.Binaries = map[image.Platform]string{amd64: dynamic} }, "dynamically linked"},
		{"wrong architecture", func(o *Options) { o.Binaries = map[image.Platform]string{amd64: bins["arm64"]} }, "not linux/amd64"},
		{"not ELF", func(o *Options) { o.Binaries = map[image.Platform]string{amd64: caCerts(t)} }, "not an ELF executable"},
		{"missing busybox", func(o *Options) { o.Busybox = map[image.Platform]string{amd64: o.Busybox[amd64]} }, "no busybox for linux/arm64"},
		{"missing binary file", func(o *Options) { o.Binaries = map[image.Platform]string{amd64: "/nonexistent/opm"} }, "/nonexistent/opm"},
		{"no binaries", func(o *Options) { o.Binaries = nil }, "no opm binary"},
		{"no CA certificates", func(o *Options) { o.CACerts = "/nonexistent/ca.crt" }, "ca-certificates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			tc.edit(&o)
			_, err := Build(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func newClient(t *testing.T) *image.Client {
	t.Helper()
	c, err := image.NewClient(image.Options{UseHTTP: true, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		var stderr bytes.Buffer
		cmd := exec.Command(name, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			return string(out)
		}
		// containers/storage loses a race when two processes (other test
		// packages) pull the same layer at once: "layer not known". The
		// pull created nothing, so trying again is safe.
		if attempt < 4 && strings.Contains(stderr.String(), "layer not known") {
			t.Logf("%s %s: %s; trying again", name, strings.Join(args, " "), strings.TrimSpace(stderr.String()))
			time.Sleep(time.Duration(attempt) * time.Second)
			continue
		}
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
}

// checkConfig checks a config as skopeo or crane print it (OCI JSON).
func checkConfig(t *testing.T, who, raw string) {
	t.Helper()
	var cf v1.ConfigFile
	if err := json.Unmarshal([]byte(raw), &cf); err != nil {
		t.Fatalf("%s: %v\n%s", who, err, raw)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, Entrypoint) || !slices.Equal(c.Cmd, Cmd) || c.User != "1001" || c.WorkingDir != "/tmp" ||
		len(c.ExposedPorts) != 1 || c.Labels["org.opencontainers.image.version"] != "v9.8.7" || !slices.Equal(c.Env, Env) {
		t.Errorf("%s: unexpected config %+v", who, c)
	}
}

func TestWriteToRegistryAndLayout(t *testing.T) {
	skopeo := registrytest.RequireTool(t, "skopeo")
	opts := options(t)
	reg := registrytest.Start(t)
	ctx := context.Background()
	c := newClient(t)

	ref := reg.Ref("opmkit/opm:v9.8.7")
	dst, err := image.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Write(ctx, c, dst, opts)
	if err != nil {
		t.Fatal(err)
	}
	var idx v1.IndexManifest
	raw := run(t, skopeo, "inspect", "--tls-verify=false", "--raw", "docker://"+ref)
	if err := json.Unmarshal([]byte(raw), &idx); err != nil || len(idx.Manifests) != 2 {
		t.Fatalf("skopeo --raw: %v, %s", err, raw)
	}
	if got := (v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256Sum([]byte(raw)))}); got != d {
		t.Errorf("registry holds %s, Write returned %s", got, d)
	}
	checkConfig(t, "skopeo (registry)", run(t, skopeo, "inspect", "--tls-verify=false", "--config", "docker://"+ref))
	checkConfig(t, "skopeo (registry, arm64)", run(t, skopeo, "inspect", "--tls-verify=false", "--override-arch", "arm64", "--config", "docker://"+ref))

	if crane, err := exec.LookPath("crane"); err == nil {
		checkConfig(t, "crane", run(t, crane, "config", "--insecure", "--platform", "linux/amd64", ref))
		if tags := run(t, crane, "ls", "--insecure", reg.Ref("opmkit/opm")); strings.TrimSpace(tags) != "v9.8.7" {
			t.Errorf("crane ls: %q", tags)
		}
		export := run(t, crane, "export", "--insecure", "--platform", "linux/amd64", ref, "-")
		fs := readTar(t, strings.NewReader(export), map[string]entry{}, false)
		for _, f := range []string{"bin/opm", "bin/sh", "bin/grpc_health_probe", "tmp", "etc/ssl/certs/ca-certificates.crt"} {
			if _, ok := fs[f]; !ok {
				t.Errorf("crane export: no %s", f)
			}
		}
	} else {
		if os.Getenv("CI") == "true" {
			t.Fatal("crane not found in PATH; .ci/run installs it")
		}
		t.Log("crane not installed (go install github.com/google/go-containerregistry/cmd/crane@v0.22.1): registry checked with skopeo only")
	}

	// One platform: a plain image manifest, here in an OCI layout.
	dir := filepath.Join(t.TempDir(), "layout")
	one := opts
	one.Binaries = map[image.Platform]string{amd64: opts.Binaries[amd64]}
	one.Busybox = map[image.Platform]string{amd64: opts.Busybox[amd64]}
	lref, err := image.ParseReference("oci:" + dir + ":serving")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(ctx, c, lref, one); err != nil {
		t.Fatal(err)
	}
	var m v1.Manifest
	raw = run(t, skopeo, "inspect", "--raw", "oci:"+dir+":serving")
	if err := json.Unmarshal([]byte(raw), &m); err != nil || len(m.Layers) != 2 || m.Config.Digest.Hex == "" {
		t.Fatalf("layout manifest: %v, %s", err, raw)
	}
	checkConfig(t, "skopeo (layout)", run(t, skopeo, "inspect", "--config", "oci:"+dir+":serving"))
}

// TestRunWithPodman runs the image: the shell, cp, [[ and opm work for the
// image's user and for an arbitrary one (OpenShift-style random UID), and
// grpc_health_probe runs opm under that name.
func TestRunWithPodman(t *testing.T) {
	podman := registrytest.RequireTool(t, "podman")
	registrytest.RequireTool(t, "runc")
	if os.Geteuid() != 0 {
		t.Skip("skipping: podman runs images here only as root")
	}
	opts := options(t)
	reg := registrytest.Start(t)
	ref := reg.Ref("opmkit/opm:run")
	dst, err := image.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(context.Background(), newClient(t), dst, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command(podman, "rmi", "--force", ref).Run() })
	base := []string{"run", "--rm", "--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
		"--tls-verify=false", "--pull", "always", "--platform", "linux/amd64"}
	script := `cd /tmp && [[ -d /tmp ]] && [[ ! -f /database/index.db ]] && cp /bin/opm /tmp/x && ls /tmp/x >/dev/null && ` +
		`echo "uid=$(id -u) pwd=$(pwd) tmp=$(stat -c %a /tmp)" && opm version && grpc_health_probe -addr=:50051`
	for _, user := range []string{"", "12345"} {
		args := slices.Clone(base)
		wantUID := "1001"
		if user != "" {
			args, wantUID = append(args, "--user", user), user
		}
		args = append(args, "--entrypoint", "/bin/sh", ref, "-c", script)
		out := run(t, podman, args...)
		for _, want := range []string{"uid=" + wantUID + " pwd=/tmp tmp=1777", "fakeopm as=opm args=version", "fakeopm as=grpc_health_probe args=-addr=:50051"} {
			if !strings.Contains(out, want) {
				t.Errorf("user %q: output lacks %q:\n%s", user, want, out)
			}
		}
	}
	// Without --entrypoint the image runs opm with its default command.
	out := run(t, podman, append(slices.Clone(base), ref)...)
	if !strings.Contains(out, "fakeopm as=opm args=registry serve --database /database/index.db") {
		t.Errorf("default command: %s", out)
	}

	// An index image on top (a database layer, as opm index add writes),
	// started the way `operator-sdk run bundle` starts it: command sh -c
	// SCRIPT, working directory /tmp, any UID.
	b, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	lb := image.NewLayerBuilder()
	if err := lb.AddFile("database/index.db", []byte("not really sqlite")); err != nil {
		t.Fatal(err)
	}
	dbLayer, err := lb.Layer()
	if err != nil {
		t.Fatal(err)
	}
	index, err := image.AppendLayer(b.Images[0], dbLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	indexRef := reg.Ref("opmkit/index:run")
	idst, err := image.ParseReference(indexRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newClient(t).Write(context.Background(), index, idst); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command(podman, "rmi", "--force", indexRef).Run() })
	sdkScript := `[[ -f /database/index.db ]] && cp /database/index.db /tmp/tmp.db; ` +
		`opm registry add -d /tmp/tmp.db -b example.com/bundle:v1 --mode=semver --skip-tls-verify=false --use-http=false && ` +
		`cat /tmp/tmp.db && echo && exec opm registry serve -d /tmp/tmp.db -p 50051`
	out = run(t, podman, append(slices.Clone(base), "--user", "12345", "--workdir", "/tmp", "--entrypoint", "sh", indexRef, "-c", sdkScript)...)
	for _, want := range []string{
		"fakeopm as=opm args=registry add -d /tmp/tmp.db -b example.com/bundle:v1 --mode=semver",
		"not really sqlite",
		"fakeopm as=opm args=registry serve -d /tmp/tmp.db -p 50051",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("operator-sdk start-up script: output lacks %q:\n%s", want, out)
		}
	}
}

// TestMakeServingImage runs `make serving-image` for linux/amd64, pushing to
// a registry: the real opm, statically linked, runs in the image.
func TestMakeServingImage(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short: builds a static opm (minutes on a cold cache)")
	}
	registrytest.RequireTool(t, "make")
	skopeo := registrytest.RequireTool(t, "skopeo")
	hostBusybox(t)
	reg := registrytest.Start(t)
	ref := reg.Ref("opmkit/opm:v0.0.1-test")
	cmd := exec.Command("make", "-C", "../..", "serving-image", "IMAGE="+ref, "PLATFORMS=linux/amd64", "VERSION=v0.0.1-test")
	cmd.Env = append(os.Environ(), "SERVING_OUT="+t.TempDir(), "SERVING_IMAGE_FLAGS=--use-http")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make serving-image: %v\n%s", err, out)
	}
	cfgRaw := run(t, skopeo, "inspect", "--tls-verify=false", "--config", "docker://"+ref)
	var cf v1.ConfigFile
	if err := json.Unmarshal([]byte(cfgRaw), &cf); err != nil {
		t.Fatal(err)
	}
	if cf.Config.Labels["org.opencontainers.image.version"] != "v0.0.1-test" || len(cf.Config.Labels["org.opencontainers.image.revision"]) != 40 {
		t.Errorf("labels %v", cf.Config.Labels)
	}

	// /bin/opm, read through skopeo's dir: transport.
	unpacked := filepath.Join(t.TempDir(), "dir")
	run(t, skopeo, "copy", "--src-tls-verify=false", "docker://"+ref, "dir:"+unpacked)
	var m v1.Manifest
	mraw, err := os.ReadFile(filepath.Join(unpacked, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mraw, &m); err != nil {
		t.Fatal(err)
	}
	fs := map[string]entry{}
	for _, l := range m.Layers {
		f, err := os.Open(filepath.Join(unpacked, l.Digest.Hex))
		if err != nil {
			t.Fatal(err)
		}
		fs = readTar(t, gunzip(t, f), fs, true)
		f.Close()
	}
	ef, err := elf.NewFile(bytes.NewReader(fs["bin/opm"].data))
	if err != nil {
		t.Fatalf("/bin/opm: %v", err)
	}
	if ef.Machine != elf.EM_X86_64 {
		t.Errorf("/bin/opm is for %s", ef.Machine)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/bin/opm has an ELF interpreter: not statically linked")
		}
	}
	_, perr := exec.LookPath("podman")
	_, rerr := exec.LookPath("runc")
	if os.Geteuid() != 0 || perr != nil || rerr != nil {
		t.Log("podman/runc missing or not root: the built image is not run")
		return
	}
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "--force", ref).Run() })
	out := run(t, "podman", "run", "--rm", "--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
		"--tls-verify=false", "--pull", "always", "--user", "12345", "--entrypoint", "/bin/sh", ref, "-c",
		`cd /tmp && [[ -d /tmp ]] && cp /bin/opm /tmp/x && /tmp/x version && opm version`)
	if strings.Count(out, "v0.0.1-test") < 2 {
		t.Errorf("opm version in the image:\n%s", out)
	}
}

// TestMakeServingImageNeedsCrossCompiler: a platform asked for whose C
// compiler is missing fails before anything is built, naming the packages.
func TestMakeServingImageNeedsCrossCompiler(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("skipping: checks the arm64 cross compiler message from an amd64 host, this is %s", runtime.GOARCH)
	}
	// A PATH with what the script needs up to its compiler check, and no cross compiler.
	bin := t.TempDir()
	for _, tool := range []string{"bash", "dirname", "dpkg", "git", "go", "gcc"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("skipping: %s not found", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("../../hack/make-serving-image")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "bash"), script, "oci:"+t.TempDir()+":x", "linux/amd64,linux/arm64")
	cmd.Env = append(os.Environ(), "PATH="+bin, "VERSION=v1.0.0", "COMMIT=abc", "DATE=2026-01-01T00:00:00Z", "SERVING_OUT="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("succeeded without a cross compiler:\n%s", out)
	}
	if !strings.Contains(string(out), "apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross") || strings.Contains(string(out), "building") {
		t.Errorf("want a failure naming the packages before any build, got:\n%s", out)
	}
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

func gunzip(t *testing.T, r io.Reader) io.Reader {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	return zr
}
