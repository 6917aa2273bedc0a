package indeximage

import (
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
	var b strings.Builder
	b.WriteString("# The builder image is expected to contain\n")
	b.WriteString("# /bin/opm (with serve subcommand)\n")
	fmt.Fprintf(&b, "FROM %s as builder\n\n", d.BuilderImage)
	b.WriteString("# Copy FBC root into image at /configs and pre-populate serve cache\n")
	fmt.Fprintf(&b, "ADD %s %s\n", d.CatalogDir, CatalogDir)
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
