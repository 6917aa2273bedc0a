package indeximage

import (
	"fmt"

	"github.com/opmkit/opm/internal/validate"
)

// OLMv1Findings checks an index image's labels as OLM v1's catalogd reads
// them (rule olmv1-catalog-image): catalogd unpacks only the directory
// that ConfigsLabel names, and refuses an image without it. ref names the
// image in the message. The catalog in that directory is checked by the
// catalog rules, not here.
func OLMv1Findings(ref string, labels map[string]string) []validate.Finding {
	if labels[ConfigsLabel] != "" {
		return nil
	}
	what := "no file-based catalog"
	if db := labels[DatabaseLabel]; db != "" {
		what = fmt.Sprintf("a sqlite index image (%s=%s), with no file-based catalog", DatabaseLabel, db)
	}
	r := validate.RuleOLMv1CatalogImage
	return []validate.Finding{{
		Rule:     r.ID,
		Severity: r.Severity,
		Field:    "labels",
		Message: fmt.Sprintf("image %s has no label %s: it is %s, and OLM v1's catalogd refuses it (\"catalog image is missing the required label\")",
			ref, ConfigsLabel, what),
		Hint: fmt.Sprintf("rebuild it with `opm index add --catalog-format fbc` (or `both`, to serve OLM v0 too), or render it (`opm render %s > catalog/catalog.json`) and build an image from `opm generate dockerfile catalog`", ref),
	}}
}
