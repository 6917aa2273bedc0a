package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
)

// registryV1Kinds are the kinds a registry+v1 bundle may carry in
// manifests/: what OLM's bundle unpacker knows how to install (upstream
// operator-registry's list, matched on kind alone as upstream does).
var registryV1Kinds = map[string]bool{
	"ClusterServiceVersion": true, "CustomResourceDefinition": true,
	"Secret": true, "ConfigMap": true, "ServiceAccount": true, "Service": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"PrometheusRule": true, "ServiceMonitor": true, "PodMonitor": true,
	"PodDisruptionBudget": true, "PriorityClass": true, "VerticalPodAutoscaler": true,
	"NetworkPolicy":     true,
	"ConsoleYAMLSample": true, "ConsoleQuickStart": true, "ConsoleCLIDownload": true,
	"ConsoleLink": true, "ConsolePlugin": true,
}

// RegistryV1Kinds lists the kinds a registry+v1 bundle may carry, sorted.
func RegistryV1Kinds() []string {
	out := make([]string, 0, len(registryV1Kinds))
	for k := range registryV1Kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func init() {
	register(&Rule{ID: "manifest-supported-kind", Severity: Error, Scope: ScopeBundle, NoCSV: true,
		What: "Every object in manifests/ of a registry+v1 bundle is of a kind OLM installs from bundles: " + strings.Join(RegistryV1Kinds(), ", ") + ".",
		Why:  "OLM cannot install other kinds from a bundle; upstream opm and operator-sdk refuse such a bundle (\"Deployment is not supported type for registryV1 bundle\"). Workloads belong in the CSV's install strategy.",
		Fix:  "Remove the object from manifests/: put Deployments in the CSV's spec.install.spec.deployments, permissions in spec.install.spec.(cluster)permissions, and create other objects outside the bundle.",
		check: func(c *Context) {
			mt := ""
			if c.Bundle.Annotations != nil {
				mt = c.Bundle.Annotations.Values[bundle.AnnotationMediaType]
			}
			if mt != bundle.MediaTypeRegistryV1 && (mt != "" || c.Bundle.CSV == nil) {
				return
			}
			for _, o := range c.Bundle.Objects {
				if o.Kind == "" || registryV1Kinds[o.Kind] {
					continue // manifest-object reports objects without a kind
				}
				hint := "remove it from manifests/"
				if o.Kind == "Deployment" {
					hint = "move the Deployment's spec into the CSV's spec.install.spec.deployments and remove the file"
				}
				c.Report(o, "kind", fmt.Sprintf("%s %q is not a kind a registry+v1 bundle may carry (%s): OLM will not install it", o.Kind, o.Name, o.File), hint)
			}
		}})
}
