package validate

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// Supply-chain rules: every pull spec a bundle makes the cluster pull is
// pinned by digest and comes from an allowed registry, as release policies
// (Konflux/Conforma and the like) require. Opt-in: --select supply-chain;
// --allowed-registries runs image-registry-allowed by itself.
var (
	ruleImagePinned = register(&Rule{ID: "image-pinned", Severity: Warning, Scope: ScopeCSV, Set: SetSupplyChain,
		What: "Every pull spec of the bundle is pinned by digest (image@sha256:...): spec.relatedImages, the containerImage annotation, the image of each container and init container of each deployment, and RELATED_IMAGE_* environment variables.",
		Why:  "A tag can be moved to other content after release: what a cluster runs would no longer be what was tested, signed and scanned, and disconnected mirrors (which copy by digest) miss it.",
		Fix:  "Replace the tag by the digest it points to at release time (skopeo inspect --format '{{.Digest}}' docker://IMAGE), keeping the tag if you like: image:tag@sha256:..."})
	ruleRegistryAllowed = register(&Rule{ID: "image-registry-allowed", Severity: Warning, Scope: ScopeCSV, Set: SetSupplyChain,
		What: "Every pull spec names a registry listed in --allowed-registries (a host[:port], or a host/path prefix); runs whenever --allowed-registries is given, and checks nothing without it.",
		Why:  "Release policies allow images only from the registries that the release process mirrors, scans and signs; an image from elsewhere fails to pull in disconnected clusters or bypasses those checks.",
		Fix:  "Point the pull spec at the allowed registry the image is published to, or add the registry to --allowed-registries."})
)

// pullSpec is one image reference in a CSV and where it is.
type pullSpec struct {
	field, where, image string
}

// pullSpecs lists every pull spec of the CSV, in document order.
func (c *Context) pullSpecs() []pullSpec {
	var out []pullSpec
	spec := c.CSV.Spec
	if img := strings.TrimSpace(c.CSV.Metadata.Annotations["containerImage"]); img != "" {
		out = append(out, pullSpec{"metadata.annotations.containerImage", "the containerImage annotation", img})
	}
	for i, d := range spec.Install.Spec.Deployments {
		pod := d.Spec.Template.Spec
		for _, list := range []struct {
			key, kind string
			cts       []bundle.Container
		}{{"containers", "container", pod.Containers}, {"initContainers", "init container", pod.InitContainers}} {
			for j, ct := range list.cts {
				base := fmt.Sprintf("spec.install.spec.deployments[%d].spec.template.spec.%s[%d]", i, list.key, j)
				out = append(out, pullSpec{base + ".image", fmt.Sprintf("%s %q of deployment %q", list.kind, ct.Name, d.Name), ct.Image})
				for k, e := range ct.Env {
					if strings.HasPrefix(e.Name, "RELATED_IMAGE_") && e.Value != "" {
						out = append(out, pullSpec{fmt.Sprintf("%s.env[%d].value", base, k), fmt.Sprintf("%s of %s %q of deployment %q", e.Name, list.kind, ct.Name, d.Name), e.Value})
					}
				}
			}
		}
	}
	for i, r := range spec.RelatedImages {
		out = append(out, pullSpec{fmt.Sprintf("spec.relatedImages[%d].image", i), fmt.Sprintf("related image %q", r.Name), r.Image})
	}
	return out
}

func init() {
	ruleImagePinned.check = func(c *Context) {
		for _, p := range c.pullSpecs() {
			if p.image == "" || Pinned(p.image) {
				continue
			}
			c.Report(c.csvObj(), p.field, fmt.Sprintf("%s is %s, not pinned by digest", p.where, p.image),
				"pin it: "+strings.TrimSpace(p.image)+"@sha256:<digest> (skopeo inspect --format '{{.Digest}}' docker://"+strings.TrimSpace(p.image)+")")
		}
	}
	ruleRegistryAllowed.check = func(c *Context) {
		// No list, nothing to check against: that says nothing about the
		// bundle, so it is no finding (a warning here failed pinned, compliant
		// bundles under --fail-on warning).
		if len(c.Opts.AllowedRegistries) == 0 {
			return
		}
		for _, p := range c.pullSpecs() {
			if p.image == "" || RegistryAllowed(p.image, c.Opts.AllowedRegistries) {
				continue
			}
			c.Report(c.csvObj(), p.field, fmt.Sprintf("%s is %s, from %s, which is not an allowed registry (%s)", p.where, p.image, Registry(p.image), strings.Join(c.Opts.AllowedRegistries, ", ")),
				"use the image's copy on an allowed registry")
		}
	}
}

// Pinned reports whether an image reference names a digest.
func Pinned(ref string) bool { return PinnedDigest(ref) != "" }

// PinnedDigest is the digest an image reference is pinned by
// ("sha256:..."), "" when it names none: the one parser of "@digest" in
// pull specs (catalogimages.Digest is its sha256 part). A sha256 digest
// must be 64 lower-case hex digits, as the OCI spec and every registry
// have it; other algorithms are taken as the reference grammar allows.
func PinnedDigest(ref string) string {
	_, d, ok := strings.Cut(strings.TrimSpace(ref), "@")
	if !ok || !refDigest.MatchString(d) {
		return ""
	}
	if hex, ok := strings.CutPrefix(d, "sha256:"); ok {
		if len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
			return ""
		}
	}
	return d
}

// Registry returns the registry host of an image reference as the
// container tools resolve it: the first path component when it looks like
// a host (has a dot or a port, or is localhost), docker.io otherwise.
func Registry(ref string) string {
	name, _ := normalizedName(ref)
	host, _, _ := strings.Cut(name, "/")
	return host
}

// normalizedName is the reference's repository with its registry spelled
// out (docker.io/library/x for x) and tag and digest removed.
func normalizedName(ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	if at := strings.IndexByte(ref, '@'); at >= 0 {
		ref = ref[:at]
	}
	if c := strings.LastIndexByte(ref, ':'); c > strings.LastIndexByte(ref, '/') {
		ref = ref[:c]
	}
	first, rest, hasSlash := strings.Cut(ref, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost" || strings.HasPrefix(first, "[")) {
		if first == "index.docker.io" || first == "registry-1.docker.io" {
			first = "docker.io"
		}
		return first + "/" + rest, true
	}
	if !hasSlash {
		return "docker.io/library/" + ref, false
	}
	return "docker.io/" + ref, false
}

// RegistryAllowed reports whether ref's registry (or repository) matches an
// entry of allowed: a registry host[:port] or a host/path prefix, matched
// on whole path components.
func RegistryAllowed(ref string, allowed []string) bool {
	name, _ := normalizedName(ref)
	for _, a := range allowed {
		a = strings.TrimSuffix(strings.TrimSpace(a), "/")
		if a == "" {
			continue
		}
		if n, _ := normalizedName(a + "/x"); strings.HasSuffix(n, "/x") {
			a = strings.TrimSuffix(n, "/x") // docker.io spellings
		}
		if name == a || strings.HasPrefix(name, a+"/") {
			return true
		}
	}
	return false
}
