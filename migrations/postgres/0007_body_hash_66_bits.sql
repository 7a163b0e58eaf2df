-- Custom SQL migration file, put your code below! --
-- A version's body_hash is the first 66 bits of its text's sha1 (11 base64 characters), not the
-- whole digest: the prefix of the stored digest is the hash a sync now computes for the same text.
UPDATE versions SET body_hash = substr(body_hash, 1, 11) WHERE length(body_hash) > 11;
