-- Custom SQL migration file, put your code below! ---- A stored entry's field as the name search and the directory read it, in SQL rather than in the
-- instance: `value` is the field's text when it holds a JSON string, `other` says it holds something
-- else (a number, an object: a drifted upstream) or the entry cannot be read as jsonb (a \u0000
-- escape, a lone surrogate), which the caller then reads itself. One such row never fails a query.
CREATE FUNCTION coworker_mirror_entry_field(body text, key text, OUT value text, OUT other boolean)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  field jsonb;
BEGIN
  field := body::jsonb -> key;
  IF field IS NULL OR jsonb_typeof(field) = 'null' THEN
    value := NULL; other := false;
  ELSIF jsonb_typeof(field) = 'string' THEN
    value := field #>> '{}'; other := false;
  ELSE
    value := NULL; other := true;
  END IF;
EXCEPTION WHEN others THEN
  value := NULL; other := true;
END;
$$;
