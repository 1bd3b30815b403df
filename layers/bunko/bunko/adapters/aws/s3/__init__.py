"""S3 adapters: blobs, downloads, presigned uploads and the drop bucket's object keys."""
