package dynamo

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentbox/agentbox/internal/store"
)

// Attribute mapping: keys and index keys are S, omitted when empty so the
// indexes stay sparse (DynamoDB rejects empty key strings anyway); ver and n
// are N (ver is absent on a counter OpAdd created, and reads as 0); ttl is
// N and omitted when 0 (the TTL sweeper ignores items without it); data is B,
// omitted when empty and read back as nil.

func sAV(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func nAV(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func uAV(n uint64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatUint(n, 10)}
}

func keyAV(k store.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{store.AttrPK: sAV(k.PK), store.AttrSK: sAV(k.SK)}
}

func encodeItem(it *store.Item) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{
		store.AttrPK:      sAV(it.PK),
		store.AttrSK:      sAV(it.SK),
		store.AttrVersion: uAV(it.Version),
		store.AttrCount:   nAV(it.Count),
	}
	for name, v := range map[string]string{
		store.AttrGSI1PK: it.GSI1PK, store.AttrGSI1SK: it.GSI1SK,
		store.AttrGSI2PK: it.GSI2PK, store.AttrGSI2SK: it.GSI2SK,
	} {
		if v != "" {
			m[name] = sAV(v)
		}
	}
	if it.ExpiresAt != 0 {
		m[store.AttrTTL] = nAV(it.ExpiresAt)
	}
	if len(it.Data) > 0 {
		m[store.AttrData] = &types.AttributeValueMemberB{Value: it.Data}
	}
	return m
}

func decodeItem(m map[string]types.AttributeValue) (*store.Item, error) {
	it := &store.Item{}
	str := func(name string, dst *string) error {
		switch v := m[name].(type) {
		case nil:
			return nil
		case *types.AttributeValueMemberS:
			*dst = v.Value
			return nil
		}
		return fmt.Errorf("%w: attribute %s is not a string", errMalformed, name)
	}
	num := func(name string, parse func(string) error) error {
		switch v := m[name].(type) {
		case nil:
			return nil
		case *types.AttributeValueMemberN:
			if parse(v.Value) != nil {
				return fmt.Errorf("%w: attribute %s is out of range", errMalformed, name)
			}
			return nil
		}
		return fmt.Errorf("%w: attribute %s is not a number", errMalformed, name)
	}
	for name, dst := range map[string]*string{
		store.AttrPK: &it.PK, store.AttrSK: &it.SK,
		store.AttrGSI1PK: &it.GSI1PK, store.AttrGSI1SK: &it.GSI1SK,
		store.AttrGSI2PK: &it.GSI2PK, store.AttrGSI2SK: &it.GSI2SK,
	} {
		if err := str(name, dst); err != nil {
			return nil, err
		}
	}
	if err := num(store.AttrVersion, func(s string) (err error) {
		it.Version, err = strconv.ParseUint(s, 10, 64)
		return err
	}); err != nil {
		return nil, err
	}
	if err := num(store.AttrCount, func(s string) (err error) {
		it.Count, err = strconv.ParseInt(s, 10, 64)
		return err
	}); err != nil {
		return nil, err
	}
	if err := num(store.AttrTTL, func(s string) (err error) {
		it.ExpiresAt, err = strconv.ParseInt(s, 10, 64)
		return err
	}); err != nil {
		return nil, err
	}
	switch v := m[store.AttrData].(type) {
	case nil:
	case *types.AttributeValueMemberB:
		if len(v.Value) > 0 {
			it.Data = v.Value
		}
	default:
		return nil, fmt.Errorf("%w: attribute %s is not binary", errMalformed, store.AttrData)
	}
	if it.PK == "" || it.SK == "" {
		return nil, fmt.Errorf("%w: missing key", errMalformed)
	}
	return it, nil
}

func cloneItem(it *store.Item) *store.Item {
	c := *it
	if it.Data != nil {
		c.Data = append([]byte(nil), it.Data...)
	}
	return &c
}
