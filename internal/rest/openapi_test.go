package rest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/helpers"

	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/version"
)

// The OpenAPI document is checked by an independent implementation,
// github.com/pb33f/libopenapi-validator: the document against the OpenAPI
// 3.1 specification schema, and every response of every REST test against
// the document (newEnv wraps its handler with conformsToOpenAPI).

var openAPIValidator = sync.OnceValues(func() (validator.Validator, error) {
	doc, err := libopenapi.NewDocument(rest.OpenAPI(registry.New()))
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return v, nil
})

// validatorMu serializes use of the shared validator; its caches are not
// documented as safe for concurrent use.
var validatorMu sync.Mutex

func TestOpenAPIDocumentValid(t *testing.T) {
	v, err := openAPIValidator()
	if err != nil {
		t.Fatalf("building the validator: %v", err)
	}
	validatorMu.Lock()
	ok, errs := v.ValidateDocument()
	validatorMu.Unlock()
	if !ok {
		for _, e := range errs {
			t.Errorf("openapi.json: %s: %s", e.Message, e.Reason)
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t, boltStore(t), nil)
	resp, err := http.Get(e.srv.URL + rest.OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Equal(body, rest.OpenAPI(registry.New())) {
		t.Errorf("GET %s: HTTP %d, %d bytes; want 200 and the generated document", rest.OpenAPIPath, resp.StatusCode, len(body))
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("GET %s: Content-Type %q, want application/json", rest.OpenAPIPath, resp.Header.Get("Content-Type"))
	}
}

// conformsToOpenAPI checks every response of next against the OpenAPI
// document: status, headers and body schema. Requests to routes the
// document does not have (tests of unknown routes) are not checked.
func conformsToOpenAPI(t *testing.T, next http.Handler) http.Handler {
	v, err := openAPIValidator()
	if err != nil {
		t.Fatalf("building the OpenAPI validator: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)

		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		req := r.Clone(r.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		resp := rec.Result()
		validatorMu.Lock()
		ok, errs := v.ValidateHttpResponse(req, resp)
		validatorMu.Unlock()
		if ok {
			return
		}
		for _, e := range errs {
			if e.ValidationType == helpers.PathValidation || e.ValidationSubType == helpers.ValidationMissingOperation ||
				e.ValidationType == helpers.ValidationMissingOperation {
				continue
			}
			var details []string
			for _, se := range e.SchemaValidationErrors {
				details = append(details, se.FieldPath+": "+se.Reason)
			}
			t.Errorf("%s %s: HTTP %d response does not conform to openapi.json: %s (%s) %v; body %.300s",
				r.Method, r.URL.Path, rec.Code, e.Message, e.Reason, details, rec.Body.String())
		}
	})
}

// TestOpenAPIInfo: the document states the build's version, its license
// and where the API is served.
func TestOpenAPIInfo(t *testing.T) {
	var doc struct {
		Info struct {
			Version string `json:"version"`
			License struct {
				Identifier string `json:"identifier"`
			} `json:"license"`
		} `json:"info"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(rest.OpenAPI(registry.New()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Version != version.Version || doc.Info.License.Identifier != "Apache-2.0" {
		t.Errorf("info = %+v, want version %s and license Apache-2.0", doc.Info, version.Version)
	}
	if len(doc.Servers) != 2 || doc.Servers[0].URL != "http://127.0.0.1:8787" {
		t.Errorf("servers = %+v, want the local server first, then a deployed stack", doc.Servers)
	}
}
