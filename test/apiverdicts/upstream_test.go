package apiverdicts

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	registrybundle "github.com/operator-framework/operator-registry/pkg/lib/bundle"
	"github.com/sirupsen/logrus"
	k8svalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// verdict is what one validator said about one bundle.
type verdict struct {
	passed bool
	errors []string // error-level messages, for the log of a difference
	// errorRules are the rules of opm's errors (empty for upstream).
	errorRules []string
}

// upstreamVerdict runs what `operator-sdk bundle validate DIR` runs by
// default, in the order it runs it: operator-registry's format check of
// the directory, the bundle loaded by operator-framework/api from the
// manifests directory the annotations name, then the content checks: the
// kinds a registry+v1 bundle may hold and the metadata of every object
// other than the CSV and CRDs, and api's default validators (bundle, CSV,
// CRDs). Loading errors fail the run, as they fail the command. A panic
// inside the library is a failure too: the command crashes.
func upstreamVerdict(dir string) (v verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = verdict{errors: []string{fmt.Sprintf("panic: %v\n%s", r, firstFrames(debug.Stack()))}}
		}
	}()
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	entry := logrus.NewEntry(logger)
	fail := func(format string, args ...any) verdict {
		v.errors = append(v.errors, fmt.Sprintf(format, args...))
		return v
	}

	if err := registrybundle.NewImageValidator(nil, entry).ValidateBundleFormat(dir); err != nil {
		v.errors = append(v.errors, "format: "+err.Error())
	}

	manifestsDir, err := manifestsDirOf(dir)
	if err != nil {
		return fail("metadata: %v", err)
	}
	mediaType, err := registrybundle.GetMediaType(manifestsDir)
	if err != nil {
		return fail("media type: %v", err)
	}
	b, err := apimanifests.GetBundleFromDir(manifestsDir)
	if err != nil {
		return fail("load: %v", err)
	}

	var results []apierrors.ManifestResult
	own := apierrors.ManifestResult{Name: b.Name}
	if mediaType != registrybundle.HelmType {
		for _, u := range b.Objects {
			gvk := u.GroupVersionKind()
			if gvk.Kind == "ClusterServiceVersion" || gvk.Kind == "CustomResourceDefinition" {
				continue
			}
			if ok, _ := registrybundle.IsSupported(gvk.Kind); !ok && mediaType == registrybundle.RegistryV1Type {
				own.Add(apierrors.ErrInvalidBundle("unsupported kind for a registry+v1 bundle", gvk))
				continue
			}
			noName := func(string, bool) []string { return nil }
			if errs := k8svalidation.ValidateObjectMetaAccessor(metav1.Object(u), false, noName, field.NewPath("metadata")); len(errs) > 0 {
				own.Add(apierrors.ErrFailedValidation(errs.ToAggregate().Error(), u.GetName()))
			}
		}
		results = append(results, apivalidation.BundleValidator.Validate(b)...)
		if b.CSV != nil {
			results = append(results, apivalidation.ClusterServiceVersionValidator.Validate(b.CSV)...)
		} else {
			own.Add(apierrors.ErrInvalidBundle("no ClusterServiceVersion in bundle", b.Name))
		}
		var crds []any
		for _, c := range b.V1beta1CRDs {
			crds = append(crds, c)
		}
		for _, c := range b.V1CRDs {
			crds = append(crds, c)
		}
		if len(crds) > 0 {
			results = append(results, apivalidation.CustomResourceDefinitionValidator.Validate(crds...)...)
		}
	}
	results = append(results, own)
	for _, r := range results {
		for _, e := range r.Errors {
			v.errors = append(v.errors, e.Error())
		}
	}
	v.passed = len(v.errors) == 0
	return v
}

// manifestsDirOf finds the bundle's annotations as operator-sdk does (the
// first directory under dir, walking in lexical order, that holds
// metadata/annotations.yaml) and returns the manifests directory they name
// (manifests/ when they name none).
func manifestsDirOf(dir string) (string, error) {
	var annotations string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || annotations != "" {
			return err
		}
		if _, err := os.Stat(filepath.Join(p, "metadata", "annotations.yaml")); err == nil {
			annotations = filepath.Join(p, "metadata", "annotations.yaml")
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if annotations == "" {
		return "", fmt.Errorf("no metadata/annotations.yaml in %s", dir)
	}
	data, err := os.ReadFile(annotations)
	if err != nil {
		return "", err
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("%s: %v", annotations, err)
	}
	name, ok := meta.Annotations[registrybundle.ManifestsLabel]
	if !ok {
		name = registrybundle.ManifestsDir
	}
	return filepath.Join(dir, filepath.Clean(name)), nil
}

// firstFrames keeps the head of a stack trace: where a panic came from.
func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	if len(lines) > 16 {
		lines = lines[:16]
	}
	return strings.Join(lines, "\n")
}
