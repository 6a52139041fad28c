-- Image bytes move out of `images` into a content-addressed table keyed by their SHA-256: the same
-- picture imported twice (a ticket photo sent again, the same frame under two UUIDs) is stored once,
-- and every image bundle can check, before it sends its first byte, that the stored bytes still hash
-- to the digest they were stored under. Bytes stay in PostgreSQL so that every service instance on
-- one database reads the same images without a shared file system.

CREATE TABLE image_blobs (
  sha256 bytea PRIMARY KEY CHECK (octet_length(sha256) = 32),
  size integer NOT NULL CHECK (size > 0),
  data bytea NOT NULL
);
-- Images are compressed already: no second compression attempt, and substring() reads only the
-- TOAST chunks of the slice it asks for, so a large image is streamed without loading it whole.
ALTER TABLE image_blobs ALTER COLUMN data SET STORAGE EXTERNAL;

INSERT INTO image_blobs (sha256, size, data)
SELECT DISTINCT ON (sha256(data)) sha256(data), octet_length(data), data FROM images;

ALTER TABLE images ADD COLUMN sha256 bytea;
UPDATE images SET sha256 = sha256(data);
ALTER TABLE images
  ALTER COLUMN sha256 SET NOT NULL,
  ADD CONSTRAINT images_sha256_fkey FOREIGN KEY (sha256) REFERENCES image_blobs (sha256),
  DROP COLUMN data;
CREATE INDEX images_sha256_idx ON images (sha256);
