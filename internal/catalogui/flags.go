package catalogui

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Flags are opm serve's flags of the UI: --http-ui, and the names its
// Install panels give the catalog.
type Flags struct {
	On bool
	Options
}

// AddFlags registers --http-ui, --http-ui-catalog-name and
// --http-ui-catalog-namespace.
func (f *Flags) AddFlags(fl *pflag.FlagSet) {
	fl.BoolVar(&f.On, "http-ui", false, "with --http: serve a web UI of the catalog at / (packages, channels and upgrade graphs, bundles, install manifests)")
	fl.StringVar(&f.CatalogName, "http-ui-catalog-name", "", "with --http-ui: the name the Install panels give the catalog's CatalogSource (OLM v0) and ClusterCatalog (OLM v1) (default: --http-catalog-name, else "+DefaultCatalogName+")")
	fl.StringVar(&f.CatalogNamespace, "http-ui-catalog-namespace", DefaultCatalogNamespace, "with --http-ui: the namespace of the catalog's CatalogSource in the Install panels (openshift-marketplace on OpenShift)")
}

// Check says what is wrong with the flags: names given without --http-ui,
// or that are not Kubernetes names.
func (f Flags) Check() error {
	if !f.On && (f.CatalogName != "" || (f.CatalogNamespace != "" && f.CatalogNamespace != DefaultCatalogNamespace)) {
		return fmt.Errorf("--http-ui-catalog-name and --http-ui-catalog-namespace name the catalog in the UI: add --http-ui")
	}
	if f.CatalogName != "" {
		if errs := validation.IsDNS1123Subdomain(f.CatalogName); len(errs) > 0 {
			return fmt.Errorf("--http-ui-catalog-name %q: %s", f.CatalogName, strings.Join(errs, "; "))
		}
	}
	if f.CatalogNamespace != "" {
		if errs := validation.IsDNS1123Label(f.CatalogNamespace); len(errs) > 0 {
			return fmt.Errorf("--http-ui-catalog-namespace %q: %s", f.CatalogNamespace, strings.Join(errs, "; "))
		}
	}
	return nil
}

// For makes the UI of a served catalog as the flags ask for it (nil
// when they do not), naming the catalog catalogName when no
// --http-ui-catalog-name is given.
func For[Q Querier](f Flags, catalogName string) func(Q) http.Handler {
	if !f.On {
		return nil
	}
	opts := f.Options
	opts.CatalogName = cmp.Or(opts.CatalogName, catalogName)
	return func(q Q) http.Handler { return Handler(q, opts) }
}
