"""Conversions beside ingest: office files to PDF (LibreOffice) and the vision advisor."""

from bunko.services.conversion.libreoffice import ConversionService
from bunko.services.conversion.vision import VisionAdvisor

__all__ = ["ConversionService", "VisionAdvisor"]
