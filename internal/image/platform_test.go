package image

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestOpenPicksPlatform(t *testing.T) {
	ctx := context.Background()
	addr := localRegistry(t)
	idx := v1.ImageIndex(empty.Index)
	for _, p := range []Platform{{"linux", "amd64", ""}, {"linux", "arm64", "v8"}, {"linux", "arm", "v7"}} {
		img, err := NewImage(ImageConfig{Labels: map[string]string{"arch": p.String()}, Platform: p})
		if err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}}})
	}
	ref, _ := name.ParseReference(addr+"/multi:1", name.Insecure)
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	for platform, want := range map[string]string{
		"":               "linux/amd64",
		"linux/arm64":    "linux/arm64/v8",
		"linux/arm/v7":   "linux/arm/v7",
		"linux/arm64/v8": "linux/arm64/v8",
	} {
		c := mustClient(t, Options{UseHTTP: true, Platform: platform})
		im, err := c.Open(ctx, mustRef(t, addr+"/multi:1"))
		if err != nil {
			t.Fatalf("%s: %v", platform, err)
		}
		if got := im.Labels()["arch"]; got != want || im.IndexDigest == nil {
			t.Errorf("--platform %q picked %s", platform, got)
		}
		im.Close()
	}
	_, err := mustClient(t, Options{UseHTTP: true, Platform: "linux/s390x"}).Open(ctx, mustRef(t, addr+"/multi:1"))
	if err == nil || !strings.Contains(err.Error(), "linux/arm64/v8") || !strings.Contains(err.Error(), "--platform") {
		t.Errorf("missing platform: %v", err)
	}
}

func TestOpenRefusesNonImages(t *testing.T) {
	ctx := context.Background()
	addr := localRegistry(t)
	// An OCI artifact: a config media type that is not an image config.
	art := mutate.ConfigMediaType(mutate.MediaType(empty.Image, "application/vnd.oci.image.manifest.v1+json"), "application/vnd.cncf.helm.config.v1+json")
	ref, _ := name.ParseReference(addr+"/chart:1", name.Insecure)
	if err := remote.Write(ref, art); err != nil {
		t.Fatal(err)
	}
	_, err := mustClient(t, Options{UseHTTP: true}).Open(ctx, mustRef(t, addr+"/chart:1"))
	if err == nil || !strings.Contains(err.Error(), "wrong media type") || !strings.Contains(err.Error(), "helm") {
		t.Errorf("artifact: %v", err)
	}
	// Not found, and the error says which image.
	_, err = mustClient(t, Options{UseHTTP: true}).Open(ctx, mustRef(t, addr+"/nothing:1"))
	if err == nil || !strings.Contains(err.Error(), "nothing:1") {
		t.Errorf("missing image: %v", err)
	}
	_, err = mustClient(t, Options{}).Open(ctx, mustRef(t, "oci:/nonexistent/layout:1"))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/layout") {
		t.Errorf("missing layout: %v", err)
	}
}
