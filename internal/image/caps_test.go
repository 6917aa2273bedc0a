package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/image/layerfs"
	"github.com/opmkit/opm/internal/image/layerfs/tartest"
)

// The attacks of crafted bundle images: each image is built here, written to
// an OCI layout, and read by a child process (this test binary) whose peak
// RSS is measured, so the parent's own buffers do not count.

const capsChildEnv = "OPM_IMAGE_CAPS_CHILD"

// maxChildRSS is the most memory reading a hostile image may take.
const maxChildRSS = 300 << 20

// TestCapsChild is the child: it flattens the image named in the
// environment and prints the error, exiting 3 on a refusal.
func TestCapsChild(t *testing.T) {
	ref := os.Getenv(capsChildEnv)
	if ref == "" {
		t.Skip("helper process for the crafted-image tests; runs only as their child")
	}
	c, err := NewClient(Options{TempDir: os.Getenv(capsChildEnv + "_TMP")})
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	r, _ := ParseReference(ref)
	im, err := c.Open(context.Background(), r)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	f, err := im.FS(context.Background())
	fmt.Printf("peak-rss %d\n", peakRSS())
	if err != nil {
		fmt.Println(err)
		os.Exit(3)
	}
	f.Close()
	os.Exit(0)
}

// peakRSS is this process's high-water RSS since exec (VmHWM): the rusage
// of a child also counts the parent's pages shared before exec.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb * 1024
		}
	}
	return -1
}

// readInChild flattens ref in a child process and returns its output, exit
// code and peak RSS in bytes.
func readInChild(t *testing.T, ref, tmp string) (string, int, int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCapsChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), capsChildEnv+"="+ref, capsChildEnv+"_TMP="+tmp)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rss int64 = -1
	var rest []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if v, ok := strings.CutPrefix(line, "peak-rss "); ok {
			fmt.Sscanf(v, "%d", &rss)
			continue
		}
		rest = append(rest, line)
	}
	if rss < 0 {
		t.Fatalf("child reported no peak RSS:\n%s", out)
	}
	return strings.Join(rest, "\n"), code, rss
}

func writeHostileLayout(t *testing.T, dir string, layers ...v1.Layer) string {
	t.Helper()
	img, err := NewImage(ImageConfig{}, layers...)
	if err != nil {
		t.Fatal(err)
	}
	ref := "oci:" + dir + ":hostile"
	c := mustClient(t, Options{})
	if _, err := c.Write(context.Background(), img, mustRef(t, ref)); err != nil {
		t.Fatal(err)
	}
	return ref
}

// zeroTar is a tar of files of n bytes of zeros each (they compress ~1000:1).
func zeroTar(t *testing.T, entries ...tartest.Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Name, Typeflag: tar.TypeReg, Mode: 0o644, Size: e.Size, Format: tar.FormatPAX}
		if e.Typ == tar.TypeLink {
			hdr = &tar.Header{Name: e.Name, Typeflag: tar.TypeLink, Linkname: e.Link, Mode: 0o644, Format: tar.FormatPAX}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := io.CopyN(tw, zeros{}, e.Size); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func mustTarLayer(t *testing.T, raw []byte) v1.Layer {
	t.Helper()
	l, err := LayerFromTar(raw)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestCraftedImagesRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and reads images of hundreds of MiB")
	}
	var linkEntries []tartest.Entry
	linkEntries = append(linkEntries, tartest.Entry{Name: "target", Size: 8 << 20})
	for i := 0; i < 2000; i++ {
		linkEntries = append(linkEntries, tartest.Entry{Name: "link", Typ: tar.TypeLink, Link: "target"})
	}
	for i := 0; i < 40; i++ {
		linkEntries = append(linkEntries, tartest.Entry{Name: fmt.Sprintf("fill/%02d", i), Size: 8 << 20})
	}
	bigYAML := mustTarLayer(t, zeroTar(t, tartest.Entry{Name: "manifests/big.yaml", Size: 100 << 20}))
	for name, tc := range map[string]struct {
		layers []v1.Layer
		entry  string
		want   string
	}{
		"sparse-gigabytes": {[]v1.Layer{mustTarLayer(t, tartest.SparseLayer("manifests/blob", 60, 200<<20))}, "manifests/blob1", "256.0 MiB limit (--max-image-size"},
		"layer-six-times":  {[]v1.Layer{bigYAML, bigYAML, bigYAML, bigYAML, bigYAML, bigYAML}, "manifests/big.yaml", "256.0 MiB limit (--max-image-size"},
		"hardlinks-2000":   {[]v1.Layer{mustTarLayer(t, zeroTar(t, linkEntries...))}, "fill/", "256.0 MiB limit (--max-image-size"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ref := writeHostileLayout(t, filepath.Join(dir, "layout"), tc.layers...)
			tmp := filepath.Join(dir, "tmp")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			out, code, rss := readInChild(t, ref, tmp)
			t.Logf("child peak RSS %s: %s", layerfs.HumanSize(rss), out)
			if code != 3 {
				t.Fatalf("child exit %d (want 3, refused): %s", code, out)
			}
			d, _ := tc.layers[0].Digest()
			for _, w := range []string{ref, d.String(), `entry "` + tc.entry, tc.want} {
				if !strings.Contains(out, w) {
					t.Errorf("refusal does not name %q:\n%s", w, out)
				}
			}
			if rss > maxChildRSS {
				t.Errorf("peak RSS %s while refusing, over %s", layerfs.HumanSize(rss), layerfs.HumanSize(maxChildRSS))
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("spilled files left: %v", left)
			}
		})
	}
}

// The same layer listed once is accepted: the cap is on the sum.
func TestLayerOnceWithinImageCap(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a 100 MiB layer")
	}
	dir := t.TempDir()
	l := mustTarLayer(t, zeroTar(t, tartest.Entry{Name: "manifests/big.yaml", Size: 100 << 20}))
	ref := writeHostileLayout(t, filepath.Join(dir, "layout"), l)
	out, code, rss := readInChild(t, ref, t.TempDir())
	if code != 0 {
		t.Fatalf("child exit %d: %s", code, out)
	}
	t.Logf("child peak RSS %s", layerfs.HumanSize(rss))
}
