package image

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

func TestNotFoundErrorsSayWhatIsMissing(t *testing.T) {
	ref, err := name.ParseReference("127.0.0.1:5000/widgets/index:v1")
	if err != nil {
		t.Fatal(err)
	}
	manifest := &transport.Error{StatusCode: 404, Errors: []transport.Diagnostic{
		{Code: transport.ManifestUnknownErrorCode, Message: "manifest unknown", Detail: map[string]any{"Tag": 1}},
	}}
	got := registryError("read manifest of", endpoint{ref: ref}, Credentials{}, manifest)
	if !errors.Is(got, ErrNotFound) || errors.Is(got, ErrBlobNotFound) {
		t.Errorf("a missing manifest is a missing image: %v", got)
	}
	want := "read manifest of 127.0.0.1:5000/widgets/index:v1: image not found (the registry says MANIFEST_UNKNOWN: manifest unknown)"
	if got.Error() != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	blobRef := ref.Context().Digest("sha256:" + "ab" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd")
	blob := &transport.Error{StatusCode: 404, Errors: []transport.Diagnostic{
		{Code: transport.BlobUnknownErrorCode, Message: "blob unknown to registry", Detail: map[string]any{"digest": "x"}},
	}}
	for _, e := range []*transport.Error{blob, {StatusCode: 404}} {
		got = registryError(opFetchBlob, endpoint{ref: blobRef}, Credentials{}, e)
		if !errors.Is(got, ErrBlobNotFound) || errors.Is(got, ErrNotFound) {
			t.Errorf("a missing blob is not a missing image: %v", got)
		}
		for _, bad := range []string{"image not found", "map["} {
			if strings.Contains(got.Error(), bad) {
				t.Errorf("%q in %q", bad, got)
			}
		}
		if !strings.Contains(got.Error(), "push the image again") {
			t.Errorf("no fix in %q", got)
		}
	}
}
