package validate

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Name checks use apimachinery's validation: it is what the API server runs,
// so a name opm accepts is a name the cluster accepts.

func dns1123Subdomain(s string) []string { return validation.IsDNS1123Subdomain(s) }
func dns1123Label(s string) []string     { return validation.IsDNS1123Label(s) }
func labelValue(s string) []string       { return validation.IsValidLabelValue(s) }

// Image references: [host[:port]/]path[:tag][@algo:hex].
var (
	refComponent = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	refDomain    = `(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?`
	refName      = regexp.MustCompile(`^(?:` + refDomain + `/)?` + refComponent + `(?:/` + refComponent + `)*$`)
	refTag       = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	refDigest    = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$`)
	sha256Digest = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// checkImageRef returns why s is not a valid image reference, or "".
func checkImageRef(s string) string {
	if s == "" {
		return "empty image reference"
	}
	if strings.TrimSpace(s) != s {
		return "leading or trailing white space"
	}
	rest := s
	if at := strings.IndexByte(rest, '@'); at >= 0 {
		d := rest[at+1:]
		rest = rest[:at]
		if !refDigest.MatchString(d) {
			return "malformed digest " + d
		}
		if strings.HasPrefix(d, "sha256:") && !sha256Digest.MatchString(d) {
			return "a sha256 digest has 64 lower-case hex characters"
		}
	}
	name := rest
	if c := strings.LastIndexByte(rest, ':'); c > strings.LastIndexByte(rest, '/') {
		name = rest[:c]
		if tag := rest[c+1:]; !refTag.MatchString(tag) {
			return "invalid tag " + tag
		}
	}
	if len(name) > 255 {
		return "repository name longer than 255 characters"
	}
	if !refName.MatchString(name) {
		if strings.ToLower(name) != name && refName.MatchString(strings.ToLower(name)) {
			// Upper case is allowed only in the registry host.
			if i := strings.IndexByte(name, '/'); i > 0 && strings.ToLower(name[i:]) == name[i:] {
				return ""
			}
			return "repository path must be lower case"
		}
		return "invalid repository name " + name
	}
	return ""
}
