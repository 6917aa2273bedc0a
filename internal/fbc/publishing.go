package fbc

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/openshift"
	"github.com/opmkit/opm/internal/validate"
)

// csvMetadataFrom is the first OpenShift release whose catalogs must use
// olm.csv.metadata rather than olm.bundle.object.
var csvMetadataFrom = openshift.Release{Major: 4, Minor: 17}

// ValidatePublishing checks c against the publishing rules of catalogs
// that opts enables and gives something to check against: no
// olm.bundle.object for OpenShift 4.17 and later (opts.OCPVersion), bundle
// and related images from opts.AllowedRegistries.
func ValidatePublishing(c *Catalog, opts validate.Options) []validate.Finding {
	v := &checker{}
	var ocp openshift.Release
	checkObjects := false
	if opts.Enabled(validate.RuleCatalogCSVMetadata.ID) && opts.OCPVersion != "" {
		r, err := openshift.ParseRelease(opts.OCPVersion)
		checkObjects = err == nil && !r.Less(csvMetadataFrom)
		ocp = r
	}
	checkRegistries := opts.Enabled(validate.RuleCatalogRegistryAllowed.ID) && len(opts.AllowedRegistries) > 0
	allowed := strings.Join(opts.AllowedRegistries, ", ")
	for _, b := range c.Bundles {
		if checkObjects {
			n, first := 0, -1
			for i, p := range b.Properties {
				if p.Type == PropertyBundleObject {
					if first < 0 {
						first = i
					}
					n++
				}
			}
			if n > 0 {
				v.report(validate.RuleCatalogCSVMetadata, b.Pos, fmt.Sprintf("properties[%d]", first), "",
					"bundle %s of package %s has %d olm.bundle.object propert(ies); catalogs for OpenShift %s (4.17 and later) use olm.csv.metadata", b.Name, b.Package, n, ocp)
			}
		}
		if !checkRegistries {
			continue
		}
		if b.Image != "" && !validate.RegistryAllowed(b.Image, opts.AllowedRegistries) {
			v.report(validate.RuleCatalogRegistryAllowed, b.Pos, "image", "",
				"bundle %s of package %s is the image %s, from %s, which is not an allowed registry (%s)", b.Name, b.Package, b.Image, validate.Registry(b.Image), allowed)
		}
		for i, ri := range b.RelatedImages {
			if ri.Image == "" || ri.Image == b.Image || validate.RegistryAllowed(ri.Image, opts.AllowedRegistries) {
				continue
			}
			v.report(validate.RuleCatalogRegistryAllowed, b.Pos, fmt.Sprintf("relatedImages[%d].image", i), "",
				"related image %q of bundle %s is %s, from %s, which is not an allowed registry (%s)", ri.Name, b.Name, ri.Image, validate.Registry(ri.Image), allowed)
		}
	}
	return v.out
}
