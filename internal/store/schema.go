package store

// The table schema, defined once. The DynamoDB adapter creates tables from
// it, the SAM template is generated from it, and a test proves they agree.
const (
	AttrPK      = "pk"
	AttrSK      = "sk"
	AttrGSI1PK  = "gsi1pk"
	AttrGSI1SK  = "gsi1sk"
	AttrGSI2PK  = "gsi2pk"
	AttrGSI2SK  = "gsi2sk"
	AttrVersion = "ver"
	AttrCount   = "n"
	AttrTTL     = "ttl"
	AttrData    = "data"
)

// IndexDef describes one global secondary index.
type IndexDef struct {
	Name string
	PK   string
	SK   string
}

// Schema describes the single table: string keys throughout, on-demand
// billing, every index projecting all attributes, TTL on AttrTTL.
type Schema struct {
	PK      string
	SK      string
	Indexes []IndexDef
	TTL     string
}

// Definition returns the table's definition.
func Definition() Schema {
	return Schema{
		PK: AttrPK,
		SK: AttrSK,
		Indexes: []IndexDef{
			{Name: "gsi1", PK: AttrGSI1PK, SK: AttrGSI1SK},
			{Name: "gsi2", PK: AttrGSI2PK, SK: AttrGSI2SK},
		},
		TTL: AttrTTL,
	}
}
