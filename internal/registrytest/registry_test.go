package registrytest

import (
	"net/http"
	"testing"
)

func TestVariants(t *testing.T) {
	for name, opts := range map[string][]Option{
		"plain": nil,
		"tls":   {WithTLS()},
		"auth":  {WithAuth("alice", "s3cret")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := Start(t, opts...)
			resp, err := r.Client().Get(r.URL() + "/v2/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /v2/: %s", resp.Status)
			}
			if r.Username != "" {
				resp, err := http.Get(r.URL() + "/v2/")
				if err == nil {
					resp.Body.Close()
					t.Fatalf("plain client without the CA reached the TLS registry: %s", resp.Status)
				}
			}
		})
	}
}
