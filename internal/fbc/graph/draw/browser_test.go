package draw

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/browsertest"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// measureJS is added to the page under test only (opm's pages have no
// script): it writes the page's scroll width and each picture's box into
// the DOM that --dump-dom prints.
const measureJS = `<script>
const r = {scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth, pics: []};
for (const s of document.querySelectorAll('.pic svg')) {
  const b = s.getBoundingClientRect();
  r.pics.push({label: s.getAttribute('aria-label'), right: b.right, width: b.width, height: b.height});
}
const pre = document.createElement('pre');
pre.id = 'measure';
pre.textContent = JSON.stringify(r);
document.body.appendChild(pre);
</script>
`

// TestPagesFitA1280Window: the -o html page of every channel of the
// reference catalogs and of the fixtures (a chain of 60, a fan of 60,
// many branches, the hostile channel), loaded in headless Chromium in a
// 1,280 px window, does not scroll sideways, and each picture is within
// 1,200 x 2,500 px. A screenshot is kept under $TEST_ARTIFACTS.
func TestPagesFitA1280Window(t *testing.T) {
	bin := browsertest.Chromium(t, "this test loads the pictures in headless Chromium")
	doc := &graph.Document{}
	for where, chans := range referenceChannels(t) {
		p := graph.DocPackage{Name: strings.TrimSuffix(where, ".fbc.json")}
		for _, c := range chans {
			c.Doc.Name = c.Title
			p.Channels = append(p.Channels, c.Doc)
		}
		doc.Packages = append(doc.Packages, p)
	}
	doc.Packages = append(doc.Packages, graph.DocPackage{Name: "fixtures", Channels: []graph.DocChannel{
		named(chain(t, 60, nil), "chain of 60"), named(fan(t, 60), "fan of 60"), named(branches(t, 40), "40 branches"), named(hostileRanges(2000), "hostile 2000"),
	}})
	var page bytes.Buffer
	if err := WriteHTML(&page, doc); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(page.String(), "</body>", measureJS+"</body>", 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "pictures.html")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	artifacts := os.Getenv("TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "opm-test-artifacts")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(artifacts, "draw-pictures-1280.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1280,900", "--screenshot="+png, "--dump-dom", "file://"+file).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	t.Logf("screenshot: %s", png)
	m := regexp.MustCompile(`(?s)<pre id="measure">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the page's measures are missing from chromium's DOM (%d bytes)", len(out))
	}
	var r struct {
		ScrollWidth, ClientWidth float64
		Pics                     []struct {
			Label                string
			Right, Width, Height float64
		}
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
		t.Fatalf("measures %q: %v", m[1], err)
	}
	if r.ScrollWidth > r.ClientWidth {
		t.Errorf("the page scrolls sideways: %v px wide in a %v px window", r.ScrollWidth, r.ClientWidth)
	}
	n := 0
	for _, c := range doc.Packages {
		n += len(c.Channels)
	}
	if len(r.Pics) != n {
		t.Errorf("%d pictures measured, want %d", len(r.Pics), n)
	}
	var wide, tall float64
	for _, p := range r.Pics {
		wide, tall = max(wide, p.Width), max(tall, p.Height)
		if p.Right > r.ClientWidth || p.Width > maxPictureW || p.Height > maxPictureH {
			t.Errorf("%s: %.0f x %.0f px, right edge at %.0f in a %.0f px window", p.Label, p.Width, p.Height, p.Right, r.ClientWidth)
		}
	}
	t.Logf("page %v px wide in a %v px window; %d pictures, widest %.0f px, tallest %.0f px", r.ScrollWidth, r.ClientWidth, len(r.Pics), wide, tall)
}

func named(dc graph.DocChannel, name string) graph.DocChannel {
	dc.Name = name
	return dc
}
