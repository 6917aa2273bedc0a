// Package servingimage builds opm's own serving image without a container
// daemon: a FROM-scratch image with a statically linked opm, a static busybox
// for the `sh -c` that `operator-sdk run bundle` runs, CA certificates and a
// non-root user. It is the default base (--binary-image) of new index images,
// so that no image opm builds depends on an upstream binary.
//
// Every entry has fixed metadata (owner 0:0, times at image.Epoch, sorted
// names), so the same files always give the same digests.
package servingimage

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/image"
)

// Facts of the image, shared with the tests and the docs.
const (
	// UID and GID the image runs as (upstream's opm image runs as 1001 too).
	UID = 1001
	GID = 1001
	// UserName is the passwd name of UID.
	UserName = "opm"
	// Port is the gRPC port `opm registry serve` listens on.
	Port = "50051"
	// CACertsPath is where Go (and most TLS clients) look for the system roots.
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
	// DefaultCACerts is the build machine's bundle (Debian's ca-certificates).
	DefaultCACerts = CACertsPath
	// DefaultSource is the org.opencontainers.image.source label.
	DefaultSource = "https://github.com/opmkit/opm"
)

// Applets are the busybox applets linked into /bin: the shell and the
// commands `operator-sdk run bundle`'s start-up script uses, plus the
// everyday ones someone debugging a running index pod reaches for.
var Applets = []string{
	"[", "[[", "ash", "basename", "cat", "chmod", "cp", "cut", "date", "df", "dirname", "du",
	"echo", "env", "false", "find", "grep", "gunzip", "gzip", "head", "id", "kill", "less",
	"ln", "ls", "mkdir", "mktemp", "mv", "printf", "ps", "pwd", "readlink", "realpath", "rm",
	"rmdir", "sed", "sh", "sleep", "sort", "stat", "tail", "tar", "tee", "test", "touch", "tr",
	"true", "uname", "uniq", "vi", "wc", "which", "whoami", "xargs", "zcat",
}

// Config of the image: what `docker run IMAGE` does without arguments
// (serve the database where new index images keep it).
var (
	Entrypoint = []string{"/bin/opm"}
	Cmd        = []string{"registry", "serve", "--database", "/database/index.db"}
	Env        = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	WorkingDir = "/tmp"
)

// Options name the files the image is built from.
type Options struct {
	// Binaries is the statically linked opm for each platform (linux/amd64, linux/arm64).
	Binaries map[image.Platform]string
	// Busybox is Debian's busybox-static /bin/busybox for each platform of Binaries.
	Busybox map[image.Platform]string
	// CACerts is the PEM bundle copied to /etc/ssl/certs/ca-certificates.crt;
	// "" is DefaultCACerts.
	CACerts string
	// Version, Revision and Source become the org.opencontainers.image.version,
	// .revision and .source labels (Source "" is DefaultSource).
	Version, Revision, Source string
}

// Built is the result of Build: one image per platform, in platform order,
// and the OCI index over them.
type Built struct {
	Platforms []image.Platform
	Images    []v1.Image
	Index     v1.ImageIndex
}

// Build reads the files and assembles the images in memory. Each image has
// two layers: the base (busybox, CA certificates, /etc, /tmp), which stays
// the same from one opm release to the next, and opm itself.
func Build(opts Options) (*Built, error) {
	if len(opts.Binaries) == 0 {
		return nil, fmt.Errorf("build serving image: no opm binary given")
	}
	caFile := opts.CACerts
	if caFile == "" {
		caFile = DefaultCACerts
	}
	caCerts, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("build serving image: CA certificates: %w (Debian: apt-get install -y ca-certificates)", err)
	}
	if !bytes.Contains(caCerts, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("build serving image: %s holds no PEM certificate", caFile)
	}
	source := opts.Source
	if source == "" {
		source = DefaultSource
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       "opm",
		"org.opencontainers.image.description": "opm serving sqlite operator index databases over gRPC",
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	if opts.Version != "" {
		labels["org.opencontainers.image.version"] = opts.Version
	}
	if opts.Revision != "" {
		labels["org.opencontainers.image.revision"] = opts.Revision
	}

	platforms := slices.SortedFunc(maps.Keys(opts.Binaries), func(a, b image.Platform) int {
		if c := cmpString(a.OS, b.OS); c != 0 {
			return c
		}
		if c := cmpString(a.Architecture, b.Architecture); c != 0 {
			return c
		}
		return cmpString(a.Variant, b.Variant)
	})
	out := &Built{Platforms: platforms}
	var entries []image.ListEntry
	for _, p := range platforms {
		bbPath, ok := opts.Busybox[p]
		if !ok {
			return nil, fmt.Errorf("build serving image: no busybox for %s (Debian: busybox-static for that architecture)", p)
		}
		img, err := buildOne(p, opts.Binaries[p], bbPath, caCerts, labels)
		if err != nil {
			return nil, fmt.Errorf("build serving image for %s: %w", p, err)
		}
		out.Images = append(out.Images, img)
		entries = append(entries, image.ListEntry{Image: img, Platform: &v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}})
	}
	for p := range opts.Busybox {
		if _, ok := opts.Binaries[p]; !ok {
			return nil, fmt.Errorf("build serving image: busybox given for %s but no opm binary", p)
		}
	}
	idx, err := image.NewList(types.OCIImageIndex, nil, entries...)
	if err != nil {
		return nil, fmt.Errorf("build serving image: index: %w", err)
	}
	out.Index = idx
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Write builds the image and stores it at dst through c: an OCI index when
// there are several platforms, a single image manifest otherwise. It returns
// the digest written.
func Write(ctx context.Context, c *image.Client, dst image.Ref, opts Options) (v1.Hash, error) {
	b, err := Build(opts)
	if err != nil {
		return v1.Hash{}, err
	}
	if len(b.Images) == 1 {
		return c.Write(ctx, b.Images[0], dst)
	}
	return c.WriteList(ctx, b.Index, dst)
}

// elfMachine is the ELF machine of each architecture the image is built for.
var elfMachine = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
}

// checkStatic refuses a binary for another architecture or one that needs a
// dynamic loader: the image has no libc to load it with.
func checkStatic(what, file string, p image.Platform) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s %s: not an ELF executable: %w", what, file, err)
	}
	// f reads from memory: there is nothing to close.
	if want, ok := elfMachine[p.Architecture]; ok && f.Machine != want {
		return nil, fmt.Errorf("%s %s is built for %s, not %s", what, file, f.Machine, p)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return nil, fmt.Errorf("%s %s is dynamically linked; the image has no C library: build it with -extldflags -static (make serving-image does)", what, file)
		}
	}
	return data, nil
}

func buildOne(p image.Platform, opmPath, busyboxPath string, caCerts []byte, labels map[string]string) (v1.Image, error) {
	opm, err := checkStatic("opm binary", opmPath, p)
	if err != nil {
		return nil, err
	}
	busybox, err := checkStatic("busybox", busyboxPath, p)
	if err != nil {
		return nil, err
	}
	base, err := baseLayer(busybox, caCerts)
	if err != nil {
		return nil, err
	}
	top, err := opmLayer(opm)
	if err != nil {
		return nil, err
	}
	return image.NewImage(image.ImageConfig{
		Labels:       labels,
		Platform:     p,
		Env:          Env,
		Entrypoint:   Entrypoint,
		Cmd:          Cmd,
		WorkingDir:   WorkingDir,
		User:         fmt.Sprintf("%d", UID),
		ExposedPorts: []string{Port + "/tcp"},
	}, base, top)
}

// Files of /etc. The user's home is /tmp: the only directory it may write.
var (
	passwd = fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\n%s:x:%d:%d:%s:/tmp:/bin/sh\n", UserName, UID, GID, UserName)
	group  = fmt.Sprintf("root:x:0:\n%s:x:%d:\n", UserName, GID)
	// Go's resolver reads this for the lookup order (files before DNS).
	nsswitch = "passwd: files\ngroup: files\nhosts: files dns\n"
)

func baseLayer(busybox, caCerts []byte) (v1.Layer, error) {
	var t tarTree
	t.dir("bin", 0o755)
	t.file("bin/busybox", 0o755, busybox)
	for _, a := range Applets {
		t.symlink("bin/"+a, "busybox")
	}
	t.dir("etc", 0o755)
	t.file("etc/passwd", 0o644, []byte(passwd))
	t.file("etc/group", 0o644, []byte(group))
	t.file("etc/nsswitch.conf", 0o644, []byte(nsswitch))
	t.dir("etc/ssl", 0o755)
	t.dir("etc/ssl/certs", 0o755)
	t.file(CACertsPath[1:], 0o644, caCerts)
	t.dir("root", 0o700)
	t.dir("tmp", 0o1777)
	return t.layer()
}

func opmLayer(opm []byte) (v1.Layer, error) {
	var t tarTree
	t.dir("bin", 0o755)
	t.file("bin/opm", 0o755, opm)
	// opm answers health checks itself when run under this name, as the
	// grpc_health_probe of upstream images did.
	t.symlink("bin/grpc_health_probe", "opm")
	return t.layer()
}

// tarTree collects entries of one layer; layer writes them sorted by name.
type tarTree struct {
	entries []tarEntry
}

type tarEntry struct {
	hdr  tar.Header
	data []byte
}

func (t *tarTree) dir(name string, mode int64) {
	t.entries = append(t.entries, tarEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode}})
}

func (t *tarTree) file(name string, mode int64, data []byte) {
	t.entries = append(t.entries, tarEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}, data: data})
}

func (t *tarTree) symlink(name, target string) {
	t.entries = append(t.entries, tarEntry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}})
}

func (t *tarTree) layer() (v1.Layer, error) {
	slices.SortFunc(t.entries, func(a, b tarEntry) int {
		return cmpString(path.Clean(a.hdr.Name), path.Clean(b.hdr.Name))
	})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, e := range t.entries {
		if i > 0 && path.Clean(t.entries[i-1].hdr.Name) == path.Clean(e.hdr.Name) {
			return nil, fmt.Errorf("layer entry %s added twice", e.hdr.Name)
		}
		h := e.hdr
		h.ModTime = image.Epoch
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return image.LayerFromTar(buf.Bytes())
}
