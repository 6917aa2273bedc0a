// Package catalogimages lists the images a catalog needs: each bundle's
// image and its related images, with who uses each and as what. An image
// named by digest is one image however many repositories or names list it
// (what a mirror copies once). A catalog names images in registries: an
// image it names by another transport (oci:, oci-archive:, dir: ...), a
// file on the machine reading the catalog, is refused, never listed.
package catalogimages

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/containers/image/v5/docker/reference"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// Use is one place an image is needed.
type Use struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
	// As is "bundle" for the bundle's own image, else "related" (Name
	// is then the related image's name, when it has one).
	As   string `json:"as"`
	Name string `json:"name,omitempty"`
}

// Image is one image and every use of it.
type Image struct {
	// Image is the pull spec as first listed (by package, bundle).
	Image string `json:"image"`
	// Digest is the sha256 digest of a pull spec pinned by digest ("" for
	// a tag).
	Digest string `json:"digest,omitempty"`
	// Also are other pull specs of the same digest (other repositories
	// or tags beside the digest).
	Also []string `json:"also,omitempty"`
	Uses []Use    `json:"uses"`
}

// List returns the images of c (of package pkg, when not ""), by pull spec.
func List(c *fbc.Catalog, pkg string) []Image {
	l := NewLister(pkg)
	l.Add(c)
	return l.Images()
}

// Lister collects the images of a catalog handed to it in parts (a
// catalog read part by part holds one part at a time, not the catalog):
// the result is List's of the whole, whatever the parts, as long as no
// bundle is split between two.
type Lister struct {
	pkg     string
	byKey   map[string]*listed
	refused map[string]*Refused
}

// Refused is an image a catalog names that is not a registry reference,
// with every bundle naming it.
type Refused struct {
	Image  string `json:"image"`
	Reason string `json:"reason"`
	Uses   []Use  `json:"uses"`
}

// Error says which bundle names the image and what is wrong with it.
func (r Refused) Error() string {
	u := r.Uses[0]
	by := u.Package + "/" + u.Bundle
	if n := len(r.Uses) - 1; n > 0 {
		by += fmt.Sprintf(" (and %d more bundles)", n)
	}
	as := u.As + " image"
	if u.Name != "" {
		as = fmt.Sprintf("related image %q", u.Name)
	}
	return fmt.Sprintf("bundle %s names %s %s: %s", by, as, r.Image, r.Reason)
}

// transports are containers/image's transport names: a catalog naming an
// image through one of them names a file, directory or store of the
// machine reading it.
var transports = []string{"oci", "oci-archive", "docker-archive", "dir", "containers-storage", "docker-daemon", "ostree", "sif", "tarball", "atomic"}

// RegistryRef returns ref as a registry reference (without a docker://
// prefix), or why a catalog may not name it: another transport than a
// registry. A name that is no valid reference at all is returned as it
// is, for the pull to report.
func RegistryRef(ref string) (string, error) {
	if rest, ok := strings.CutPrefix(ref, "docker://"); ok {
		ref = rest // checked as a bare name: docker://oci:/x is still oci:/x to a pull
	}
	scheme, _, hasScheme := strings.Cut(ref, ":")
	if hasScheme && slices.Contains(transports, scheme) {
		return "", fmt.Errorf("the %s: transport reads this machine's files; a catalog names images in registries (NAME or docker://NAME): push the image to a registry and name it there", scheme)
	}
	if _, err := reference.ParseNormalizedNamed(ref); err != nil && hasScheme && isScheme(scheme) {
		return "", fmt.Errorf("%s: is not a registry reference; a catalog names images in registries (NAME or docker://NAME)", scheme)
	}
	return ref, nil
}

// isScheme: s could be a transport's name (letters, digits, '-', '+').
func isScheme(s string) bool {
	if s == "" || s == "localhost" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '+' {
			return false
		}
	}
	return true
}

// RefusedError names each of refused with the bundle naming it, for a
// command that copies nothing of catalog because of them.
func RefusedError(catalog string, refused []Refused) error {
	var b strings.Builder
	fmt.Fprintf(&b, "catalog %s names %d images that are not in a registry; nothing was copied:", catalog, len(refused))
	for i, r := range refused {
		if i == 20 {
			fmt.Fprintf(&b, "\n  and %d more", len(refused)-i)
			break
		}
		b.WriteString("\n  " + r.Error())
	}
	return errors.New(b.String())
}

// Refused lists the images the catalog names by another transport than a
// registry, sorted by image.
func (l *Lister) Refused() []Refused {
	out := make([]Refused, 0, len(l.refused))
	for _, r := range l.refused {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out
}

// RefusedError is one error listing every image refused, with the bundles
// naming it; nil when none was.
func (l *Lister) RefusedError() error {
	refused := l.Refused()
	if len(refused) == 0 {
		return nil
	}
	msgs := make([]string, len(refused))
	for i, r := range refused {
		msgs[i] = r.Error()
	}
	return errors.New(printable.Count(len(refused), "image is not a registry reference and is", "images are not registry references and are") +
		" not listed:\n  " + strings.Join(msgs, "\n  "))
}

// listed is an image with the pull spec of each use, in the order added.
type listed struct {
	digest string
	uses   []Use
	specs  []string
}

// NewLister lists the images of package pkg ("" for every package).
func NewLister(pkg string) *Lister {
	return &Lister{pkg: pkg, byKey: map[string]*listed{}, refused: map[string]*Refused{}}
}

// Add lists the images of c's bundles.
func (l *Lister) Add(c *fbc.Catalog) {
	for _, b := range c.Bundles {
		if l.pkg != "" && b.Package != l.pkg {
			continue
		}
		l.add(b.Image, Use{Package: b.Package, Bundle: b.Name, As: "bundle"})
		for _, r := range b.RelatedImages {
			if r.Image == b.Image {
				continue // a bundle lists itself among its related images
			}
			l.add(r.Image, Use{Package: b.Package, Bundle: b.Name, As: "related", Name: r.Name})
		}
	}
}

func (l *Lister) add(ref string, u Use) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return
	}
	reg, err := RegistryRef(ref)
	if err != nil {
		r := l.refused[ref]
		if r == nil {
			r = &Refused{Image: ref, Reason: err.Error()}
			l.refused[ref] = r
		}
		r.Uses = append(r.Uses, u)
		return
	}
	ref = reg
	key, digest := ref, Digest(ref)
	if digest != "" {
		key = digest
	}
	im := l.byKey[key]
	if im == nil {
		im = &listed{digest: digest}
		l.byKey[key] = im
	}
	im.uses = append(im.uses, u)
	im.specs = append(im.specs, ref)
}

// Images returns what was listed: each image with its uses by package and
// bundle, named by the pull spec of its first use, sorted by that name.
func (l *Lister) Images() []Image {
	out := make([]Image, 0, len(l.byKey))
	for _, im := range l.byKey {
		order := make([]int, len(im.uses))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			ua, ub := im.uses[order[a]], im.uses[order[b]]
			if ua.Package != ub.Package {
				return ua.Package < ub.Package
			}
			return ua.Bundle < ub.Bundle
		})
		img := Image{Image: im.specs[order[0]], Digest: im.digest}
		for _, i := range order {
			img.Uses = append(img.Uses, im.uses[i])
			if spec := im.specs[i]; spec != img.Image && !slices.Contains(img.Also, spec) {
				img.Also = append(img.Also, spec)
			}
		}
		sort.Strings(img.Also)
		out = append(out, img)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out
}

// Digest is the sha256 digest a pull spec is pinned by ("" when it is
// not): validate.PinnedDigest's, which parses pull specs for every rule.
func Digest(ref string) string {
	if d := validate.PinnedDigest(ref); strings.HasPrefix(d, "sha256:") {
		return d
	}
	return ""
}

// WriteTable prints images a row each: the image, its first use (and how
// many more), and as what.
func WriteTable(w io.Writer, images []Image) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tUSED BY\tAS")
	for _, im := range images {
		u := im.Uses[0]
		by := u.Package + "/" + u.Bundle
		if n := len(im.Uses) - 1; n > 0 {
			by += fmt.Sprintf(" (+%d)", n)
		}
		as := u.As
		if u.Name != "" {
			as += " " + u.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", printable.Name(im.Image), printable.Name(by), printable.Name(as))
	}
	return tw.Flush()
}
