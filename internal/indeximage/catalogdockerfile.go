package indeximage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// CatalogDir is where a file-based catalog image keeps its catalog, and
// CatalogCacheDir its serve cache (upstream's paths).
const (
	CatalogDir      = "/configs"
	CatalogCacheDir = "/tmp/cache"
)

// Scratch is the base image of a catalog image without opm (for OLM v1,
// or OLM v0 catalog sources that extract the catalog).
const Scratch = "scratch"

// CatalogDockerfile describes the Dockerfile of a file-based catalog image,
// as upstream `opm generate dockerfile` writes it.
type CatalogDockerfile struct {
	// BaseImage is the image the catalog image is built on: one whose
	// /bin/opm serves the catalog, or scratch for an image without opm.
	BaseImage string
	// BuilderImage runs /bin/opm in the build stage to build the serve cache.
	BuilderImage string
	// CatalogDir is the catalog directory, relative to the build context.
	CatalogDir string
	// Labels are added after the configs label, in key order.
	Labels map[string]string
}

// Bytes is the Dockerfile: a build stage that copies the catalog to
// /configs and builds opm serve's cache in /tmp/cache, then the image on
// BaseImage holding both, with the configs label; on a base with opm, it
// serves the catalog from the cache.
func (d CatalogDockerfile) Bytes() ([]byte, error) {
	switch {
	case d.BaseImage == "":
		return nil, fmt.Errorf("no base image")
	case d.BuilderImage == "" || d.BuilderImage == Scratch:
		return nil, fmt.Errorf("builder image %q: the build stage runs /bin/opm, which scratch does not have", d.BuilderImage)
	case d.CatalogDir == "":
		return nil, fmt.Errorf("no catalog directory")
	}
	for k, v := range d.Labels {
		if k == "" || strings.ContainsAny(k+v, "\n\r") {
			return nil, fmt.Errorf("label %q=%q: a label needs a key, and neither may hold a line break", k, v)
		}
	}
	add, err := transferLine("ADD", d.CatalogDir, CatalogDir)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("# The builder image is expected to contain\n")
	b.WriteString("# /bin/opm (with serve subcommand)\n")
	fmt.Fprintf(&b, "FROM %s as builder\n\n", d.BuilderImage)
	b.WriteString("# Copy FBC root into image at /configs and pre-populate serve cache\n")
	b.WriteString(add)
	fmt.Fprintf(&b, "RUN [\"/bin/opm\", \"serve\", %q, %q, \"--cache-only\"]\n\n", CatalogDir, "--cache-dir="+CatalogCacheDir)
	fmt.Fprintf(&b, "FROM %s\n", d.BaseImage)
	if d.BaseImage != Scratch {
		b.WriteString("# The base image is expected to contain\n")
		b.WriteString("# /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\n")
		b.WriteString("# Configure the entrypoint and command\n")
		b.WriteString("ENTRYPOINT [\"/bin/opm\"]\n")
		fmt.Fprintf(&b, "CMD [\"serve\", %q, %q]\n", CatalogDir, "--cache-dir="+CatalogCacheDir)
	} else {
		b.WriteString("# OLMv0 CatalogSources that use binary-less images must set:\n")
		b.WriteString("# spec:\n")
		b.WriteString("#   grpcPodConfig:\n")
		b.WriteString("#     extractContent:\n")
		fmt.Fprintf(&b, "#       catalogDir: %s\n", CatalogDir)
		fmt.Fprintf(&b, "#       cacheDir: %s\n", CatalogCacheDir)
	}
	fmt.Fprintf(&b, "\nCOPY --from=builder %s %s\n", CatalogDir, CatalogDir)
	fmt.Fprintf(&b, "COPY --from=builder %s %s\n\n", CatalogCacheDir, CatalogCacheDir)
	b.WriteString("# Set FBC-specific label for the location of the FBC root directory\n")
	b.WriteString("# in the image\n")
	fmt.Fprintf(&b, "LABEL %s=%s\n", ConfigsLabel, CatalogDir)
	if len(d.Labels) > 0 {
		b.WriteString("\n# Set other custom labels\n")
		keys := make([]string, 0, len(d.Labels))
		for k := range d.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "LABEL %s=%s\n", dockerQuote(k), dockerQuote(d.Labels[k]))
		}
	}
	return []byte(b.String()), nil
}

// dockerQuote double-quotes s for a Dockerfile LABEL, escaping what would
// end the quotes early.
func dockerQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// transferLine is the Dockerfile line "INSTR SRC DST" (ADD or COPY) for a
// path from the user. A control character would end the line and start
// one of the user's choosing, so it is refused; so is what the build
// expands in a source ($ variables, glob patterns, the escape character),
// which cannot be written literally in both forms. A path with a space or a
// quote is written in the JSON-array form, where it stays one argument;
// others as upstream writes them.
func transferLine(instr, src, dst string) (string, error) {
	for _, r := range src {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "", fmt.Errorf("directory %q: its name holds the control character %U, which would break the Dockerfile's %s line; rename it", src, r, instr)
		}
	}
	if i := strings.IndexAny(src, "$*?[\\"); i >= 0 {
		return "", fmt.Errorf("directory %q: its name holds %q, which the build would expand in the Dockerfile's %s line; rename it", src, src[i], instr)
	}
	if !strings.ContainsAny(src, " \"'") {
		return instr + " " + src + " " + dst + "\n", nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(src); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s [%s, %q]\n", instr, strings.TrimSuffix(b.String(), "\n"), dst), nil
}
