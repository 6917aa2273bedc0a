package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// Rules about bundle images (they run only when the bundle was read from an
// image, whose config labels the loader hands over in Bundle.Labels).

// imageLabelKeys are the annotations a bundle image must also carry as
// labels: OLM and upstream opm read these from the image config, without
// unpacking it.
var imageLabelKeys = []string{
	bundle.AnnotationMediaType, bundle.AnnotationManifests, bundle.AnnotationMetadata,
	bundle.AnnotationPackage, bundle.AnnotationChannels, bundle.AnnotationDefaultChannel,
}

func init() {
	register(&Rule{ID: "image-labels", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "A bundle image's labels say the same as its metadata/annotations.yaml.",
		Why: "Tools read the package and channels from the image labels (without unpacking the image) or from annotations.yaml; " +
			"when the two disagree, which one wins depends on the tool. opm and OLM's unpacker go by annotations.yaml, so the labels are what is wrong.",
		Fix: "Rebuild the image from the bundle directory (`opm bundle build`), which copies annotations.yaml into the labels.",
		check: func(c *Context) {
			a := c.Bundle.Annotations
			if c.Bundle.Labels == nil || a == nil {
				return
			}
			keys := make([]string, 0, len(a.Values))
			for k := range a.Values {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				want := a.Values[k]
				got, ok := c.Bundle.Labels[k]
				if ok && strings.TrimSpace(got) == strings.TrimSpace(want) {
					continue
				}
				// The core keys decide what the bundle is; other annotations
				// (metrics, test, OpenShift keys) only deserve a warning.
				sev := Warning
				if contains(imageLabelKeys, k) {
					sev = Error
				}
				f := annotationPath(k)
				var msg string
				if !ok {
					msg = fmt.Sprintf("the image has no label %s; annotations.yaml says %q (annotations win)", k, want)
				} else {
					msg = fmt.Sprintf("image label %s is %q but annotations.yaml says %q (annotations win)", k, got, want)
				}
				c.findings = append(c.findings, Finding{Rule: c.rule.ID, Severity: sev, File: a.File, Line: a.Doc.LineOf(f), Field: f,
					Message: msg, Hint: "rebuild the image with `opm bundle build` so that its labels match metadata/annotations.yaml"})
			}
		}})
}
