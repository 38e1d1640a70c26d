package infra_test

// cfn-lint and the SAM transform (aws-sam-translator) are the deploy
// tools' own checks of template.yaml. They are Python programs, not part of
// what `make test` needs on a new machine (Go, make, git), so a test that
// cannot find them skips, naming the install command; with CI set (as
// .ci/run sets it) a missing tool fails instead: CI must never pass on a
// skipped check.

import (
	"encoding/json"
	"github.com/agentbox/agentbox/internal/opview"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/infra"
	"github.com/agentbox/agentbox/internal/registry"
)

const installDeployTools = "pip install cfn-lint==1.51.0 aws-sam-translator==1.110.0"

func missingTool(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not available (%v); CI needs it: %s", what, err, installDeployTools)
	}
	t.Skipf("%s is not available (%v); install it with: %s (CI fails instead of skipping)", what, err, installDeployTools)
}

// TestCfnLint: cfn-lint finds nothing in template.yaml.
func TestCfnLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		missingTool(t, "cfn-lint", err)
	}
	out, err := exec.Command(bin, "--", templatePath).CombinedOutput()
	if err != nil {
		t.Errorf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

// samTransform runs the SAM transform over template.yaml, with the
// functions' local CodeUri replaced by an S3 one (as sam deploy uploads
// it), and prints the resource types of the CloudFormation it yields.
const samTransform = `
import json, sys
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse
from samtranslator.model.exceptions import InvalidDocumentException
t = yaml_parse(open(sys.argv[1]).read())
for r in t["Resources"].values():
    if r["Type"] == "AWS::Serverless::Function":
        r["Properties"]["CodeUri"] = "s3://agentbox-test/bootstrap.zip"
class NoManagedPolicies:
    def load(self): return {}
try:
    out = transform(t, {}, NoManagedPolicies())
except InvalidDocumentException as e:
    sys.exit("SAM transform: " + "; ".join(str(c) for c in e.causes))
json.dump({k: v["Type"] for k, v in out["Resources"].items()}, sys.stdout)
`

// TestSAMTransform: the SAM transform accepts template.yaml and yields one
// Lambda function per tool plus MCP, sharing the template's three roles
// (SAM makes none of its own), an alarm per function plus three, and a
// log group per function plus the API's.
func TestSAMTransform(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(python, "-c", "import samtranslator").Run()
	}
	if err != nil {
		missingTool(t, "python3 with aws-sam-translator", err)
	}
	cmd := exec.Command(python, "-c", samTransform, templatePath)
	cmd.Env = append(os.Environ(), "AWS_DEFAULT_REGION=us-east-1")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("SAM transform: %v\n%s", err, stderr)
	}
	var resources map[string]string
	if err := json.Unmarshal(out, &resources); err != nil {
		t.Fatalf("SAM transform output: %v", err)
	}
	count := map[string]int{}
	for _, typ := range resources {
		count[typ]++
	}
	// Every tool, MCP, the intent sweep, the operator view and its post,
	// and the webhook dispatcher (which has its own role, queue, two more
	// alarms and an event source mapping instead of a permission).
	functions := len(registry.New().Tools()) + 5
	for typ, want := range map[string]int{
		"AWS::Lambda::Function": functions,
		"AWS::IAM::Role":        4,
		// Errors and latency per function (not inbox_list's latency),
		// concurrency per function (conditional), API 5xx and 4xx, table
		// throttles and system errors, stuck intents; the webhook
		// dispatcher's dead letters and iterator age.
		"AWS::CloudWatch::Alarm":          3*functions - 1 + 5 + 2,
		"AWS::CloudWatch::Dashboard":      1,
		"AWS::Logs::LogGroup":             functions + 1,
		"AWS::DynamoDB::Table":            1,
		"AWS::SQS::Queue":                 1,
		"AWS::Lambda::EventSourceMapping": 1,
		"AWS::ApiGatewayV2::Api":          1,
		"AWS::ApiGatewayV2::Stage":        1,
		// One per function's first event (the webhook dispatcher's is its
		// Redeliver schedule: its stream needs none), one per further
		// MCP and view route, the OpenAPI route and the OAuth metadata
		// routes.
		"AWS::Lambda::Permission":   functions + len(infra.MCPRoutes) - 1 + len(opview.Routes) - 1 + 1 + len(infra.OAuthMetadataRoutes),
		"AWS::Serverless::Function": 0,
	} {
		if count[typ] != want {
			t.Errorf("SAM transform yields %d %s, want %d", count[typ], typ, want)
		}
	}
	for id, typ := range resources {
		if typ == "AWS::IAM::Role" && !strings.HasSuffix(id, "Role") {
			t.Errorf("SAM made role %s of its own", id)
		}
	}
}
